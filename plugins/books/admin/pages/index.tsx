import { Head, Link, useForm } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import { Card, FieldError, FormErrors, ServerList, type PagedList } from '@console/components/ui'

interface Props {
  books: PagedList<{
    id: number
    code: string
    owner: string
    title: string
    archived: boolean
    members: number
  }>
}

function CreateBook() {
  const form = useForm({ code: '', title: '', owner: '' })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    form.transform((data) =>
      Object.fromEntries(Object.entries(data).filter(([, value]) => value !== ''))
    )
    form.post('/admin/books')
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="New book">
      <FormErrors />
      <label>
        Book code
        <input
          name="code"
          value={form.data.code}
          onChange={(event) => form.setData('code', event.target.value)}
          required
        />
        <FieldError name="code" />
      </label>
      <label>
        Title
        <input
          name="title"
          value={form.data.title}
          onChange={(event) => form.setData('title', event.target.value)}
        />
      </label>
      <label>
        Owner (empty: you)
        <input
          name="owner"
          value={form.data.owner}
          placeholder="code, e-mail or phone"
          onChange={(event) => form.setData('owner', event.target.value)}
        />
        <FieldError name="owner" />
      </label>
      <button type="submit" className="primary" disabled={form.processing}>
        Create book
      </button>
    </form>
  )
}

/** Every book, searched and paged on the server. */
export default function BooksIndex({ books }: Props) {
  const [creating, setCreating] = useState(false)
  return (
    <>
      <Head title="Books" />
      <h1>Books</h1>
      <Card
        actions={
          <button type="button" onClick={() => setCreating(!creating)}>
            {creating ? 'Close' : 'New book'}
          </button>
        }
      >
        {creating && <CreateBook />}
        <ServerList
          list={books}
          placeholder="Book code, title or owner"
          rowKey={(book) => book.id}
          empty="No book matches."
          columns={[
            {
              header: 'Book',
              cell: (book) => <Link href={`/admin/books/${book.id}`}>{book.code}</Link>,
            },
            { header: 'Title', cell: (book) => book.title },
            { header: 'Owner', cell: (book) => book.owner },
            { header: 'Members', cell: (book) => book.members },
            { header: '', cell: (book) => book.archived && <span className="tag">archived</span> },
          ]}
        />
      </Card>
    </>
  )
}
