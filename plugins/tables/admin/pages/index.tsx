import { Head, Link } from '@inertiajs/react'
import { Card, Pager, SearchBox } from '@console/components/ui'

interface Props {
  books: {
    bookId: number
    book: string
    owner: string
    tables: { id: number; name: string; fields: number; views: string[]; rows: number }[]
  }[]
  total: number
  page: number
  perPage: number
  search: string
}

/** Per book: its tables, their fields, views and row counts. */
export default function TablesIndex({ books, total, page, perPage, search }: Props) {
  return (
    <>
      <Head title="Tables" />
      <h1>Tables</h1>
      <SearchBox value={search} placeholder="Book, owner or table name" />
      {books.map((book) => (
        <Card
          key={book.bookId}
          title={`${book.owner} / ${book.book}`}
          actions={<Link href={`/admin/books/${book.bookId}`}>Book</Link>}
        >
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Table</th>
                  <th>Fields</th>
                  <th>Views</th>
                  <th>Rows</th>
                </tr>
              </thead>
              <tbody>
                {book.tables.map((table) => (
                  <tr key={table.id}>
                    <td>
                      <Link href={`/admin/tables/${table.id}`}>{table.name}</Link>
                    </td>
                    <td>{table.fields}</td>
                    <td>{table.views.join(', ') || '—'}</td>
                    <td>{table.rows.toLocaleString('en')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      ))}
      {books.length === 0 && (
        <p className="muted">No book has tables{search ? ' matching this search' : ''}.</p>
      )}
      <Pager page={page} perPage={perPage} total={total} />
    </>
  )
}
