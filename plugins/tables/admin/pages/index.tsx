import { Head, Link } from '@inertiajs/react'
import { Card, DataTable, Pager, SearchBox, type PagedList } from '@console/components/ui'

interface Props {
  books: PagedList<{
    bookId: number
    book: string
    owner: string
    tables: { id: number; name: string; fields: number; views: string[]; rows: number }[]
  }>
}

/** Per book: its tables, their fields, views and row counts. */
export default function TablesIndex({ books }: Props) {
  return (
    <>
      <Head title="Tables" />
      <h1>Tables</h1>
      <SearchBox value={books.search} placeholder="Book, owner or table name" />
      {books.items.map((book) => (
        <Card
          key={book.bookId}
          title={`${book.owner} / ${book.book}`}
          actions={<Link href={`/admin/books/${book.bookId}`}>Book</Link>}
        >
          <DataTable
            rows={book.tables}
            rowKey={(table) => table.id}
            columns={[
              {
                header: 'Table',
                cell: (table) => <Link href={`/admin/tables/${table.id}`}>{table.name}</Link>,
              },
              { header: 'Fields', cell: (table) => table.fields },
              { header: 'Views', cell: (table) => table.views.join(', ') || '—' },
              { header: 'Rows', cell: (table) => table.rows.toLocaleString('en') },
            ]}
          />
        </Card>
      ))}
      {books.items.length === 0 && (
        <p className="muted">No book has tables{books.search ? ' matching this search' : ''}.</p>
      )}
      <Pager {...books} />
    </>
  )
}
