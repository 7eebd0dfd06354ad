import { Head, Link } from '@inertiajs/react'
import { Card, ServerList, type PagedList } from '@console/components/ui'

interface Row {
  id: number
  cells: string[]
}

interface Props {
  table: { id: number; name: string; book: string; bookId: number; owner: string }
  fields: { id: number; name: string; type: string }[]
  views: { id: number; name: string; presentation: string }[]
  rows: PagedList<Row>
}

/** A read-only grid of one table, paged on the server (the getTableValues service). */
export default function TableShow({ table, fields, views, rows }: Props) {
  return (
    <>
      <Head title={table.name} />
      <p className="muted">
        <Link href="/admin/tables">Tables</Link> ›{' '}
        <Link href={`/admin/books/${table.bookId}`}>
          {table.owner} / {table.book}
        </Link>{' '}
        ›
      </p>
      <h1>{table.name}</h1>
      <p className="muted small">
        Fields: {fields.map((field) => `${field.name} (${field.type})`).join(', ') || '—'} · Views:{' '}
        {views.map((view) => view.name).join(', ') || '—'}
      </p>
      <Card>
        <ServerList
          list={rows}
          className="grid"
          rowKey={(row) => row.id}
          rowData={(row) => ({ 'data-row': row.id })}
          empty="No row."
          columns={[
            { header: 'id', cell: (row) => row.id, className: 'muted' },
            ...fields.map((field, index) => ({
              header: field.name,
              cell: (row: Row) => row.cells[index],
              title: (row: Row) => row.cells[index],
            })),
          ]}
        />
      </Card>
    </>
  )
}
