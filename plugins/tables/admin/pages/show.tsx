import { Head, Link } from '@inertiajs/react'
import { Card, Pager } from '@console/components/ui'

interface Props {
  table: { id: number; name: string; book: string; bookId: number; owner: string }
  fields: { id: number; name: string; type: string }[]
  views: { id: number; name: string; presentation: string }[]
  rows: { id: number; cells: string[] }[]
  page: number
  perPage: number
  total: number
}

/** A read-only grid of one table, paged on the server (the getTableValues service). */
export default function TableShow({ table, fields, views, rows, page, perPage, total }: Props) {
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
        <div className="table-wrap">
          <table className="grid">
            <thead>
              <tr>
                <th>id</th>
                {fields.map((field) => (
                  <th key={field.id}>{field.name}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id} data-row={row.id}>
                  <td className="muted">{row.id}</td>
                  {row.cells.map((cell, index) => (
                    <td key={fields[index]?.id ?? index} title={cell}>
                      {cell}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <Pager page={page} perPage={perPage} total={total} />
      </Card>
    </>
  )
}
