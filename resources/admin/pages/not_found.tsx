import { Head, Link } from '@inertiajs/react'

/** A console address with nothing behind it (an unknown page, user, book...): the navigation stays. */
export default function NotFound() {
  return (
    <>
      <Head title="Not found" />
      <h1>Not found</h1>
      <p>
        There is nothing at this address: the page does not exist, or what it showed was deleted.
      </p>
      <p>
        <Link href="/admin">Back to the dashboard</Link>
      </p>
    </>
  )
}
