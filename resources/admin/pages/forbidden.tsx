import { Head, Link } from '@inertiajs/react'

export default function Forbidden() {
  return (
    <div className="signin">
      <Head title="Not allowed" />
      <h1>Not allowed</h1>
      <p>Your administrator account does not have the right this page needs.</p>
      <Link href="/admin">Back to the dashboard</Link>
    </div>
  )
}
