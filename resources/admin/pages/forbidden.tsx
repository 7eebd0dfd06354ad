import { Head, Link } from '@inertiajs/react'

/** A page this administrator's rights do not open (the navigation stays, with what they may use). */
export default function Forbidden() {
  return (
    <>
      <Head title="Not allowed" />
      <h1>Not allowed</h1>
      <p>Your administrator account does not have the right this page needs.</p>
      <p>
        <Link href="/admin">Back to the dashboard</Link>
      </p>
    </>
  )
}
