import { Head, Link, router, usePage } from '@inertiajs/react'
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react'
import { Card, FilterSelect, counted } from '@console/components/ui'
import type { SharedProps } from '@console/components/layout'
import { useConsoleFeed } from '@console/components/live_feed'
import { EditableCell } from './grid/editable_cell'
import { ColumnPicker, FilterEditor } from './grid/filter_editor'
import { GridPager } from './grid/grid_pager'
import { visit, withQuery } from './grid/navigation'
import { RowPanel } from './grid/row_panel'
import type { GridField, GridProps, GridRow } from './grid/types'
import './grid/grid.css'

/** The columns this browser hides, per table. */
function useHiddenColumns(tableId: number) {
  const key = `quire.grid.hidden.${tableId}`
  const [hidden, setHidden] = useState<Set<number>>(() => {
    try {
      return new Set(JSON.parse(window.localStorage.getItem(key) ?? '[]') as number[])
    } catch {
      return new Set()
    }
  })
  const change = (next: Set<number>) => {
    setHidden(next)
    window.localStorage.setItem(key, JSON.stringify([...next]))
  }
  return [hidden, change] as const
}

/**
 * Follows other clients' writes: the server announces every write to a table on the grid
 * channel; when this table was written (or notices may have been missed), the page reloads its
 * rows (and the open row panel) in place. Cells whose text changed are marked a moment.
 */
function useLiveRows(props: GridProps) {
  const panelOpen = Boolean(props.query.row)
  return useConsoleFeed<{ catId: number }>(props.live, (notice) => {
    if (notice && notice.catId !== props.table.id) return
    router.reload({ only: panelOpen ? ['rows', 'panel'] : ['rows'] })
  })
}

/** Cells whose text changed since the last rows, for a short highlight. */
function useChangedCells(rows: GridRow[]) {
  const previous = useRef(new Map<number, string[]>())
  const [changed, setChanged] = useState(new Set<string>())
  useEffect(() => {
    const marks = new Set<string>()
    for (const row of rows) {
      const before = previous.current.get(row.id)
      if (before)
        row.cells.forEach(
          (text, index) => before[index] !== text && marks.add(`${row.id}:${index}`)
        )
    }
    previous.current = new Map(rows.map((row) => [row.id, row.cells]))
    if (marks.size === 0) return
    setChanged(marks)
    const timer = setTimeout(() => setChanged(new Set()), 2500)
    return () => clearTimeout(timer)
  }, [rows])
  return changed
}

/**
 * One table's rows in a grid: sorted by a column, filtered (the view filter compiler's
 * conditions), searched, paged on the server; columns shown or hidden; cells edited in place
 * when the administrator may write the table; a row panel with the row's comments and changes;
 * the rows as CSV. Cells follow other clients' writes live.
 */
export default function TableShow(props: GridProps) {
  const { table, fields, views, query, rows, edit, panel } = props
  const { url, props: shared } = usePage<SharedProps>()
  const [hidden, setHidden] = useHiddenColumns(table.id)
  const [open, setOpen] = useState<'filters' | 'columns' | null>(
    query.filters.length ? 'filters' : null
  )
  const [search, setSearch] = useState(query.search)
  const following = useLiveRows(props)
  const changed = useChangedCells(rows.items)
  const shown = useMemo(
    () =>
      fields.map((field, index) => ({ field, index })).filter(({ field }) => !hidden.has(field.id)),
    [fields, hidden]
  )
  const exportHref = withQuery(
    `/admin/tables/${table.id}/export.csv${url.includes('?') ? url.slice(url.indexOf('?')) : ''}`,
    {
      page: undefined,
      perPage: undefined,
      row: undefined,
      columns: hidden.size ? shown.map(({ field }) => field.id).join(',') : undefined,
    }
  )
  const openRow = (rowId: number | null) =>
    visit(url, { row: rowId ?? undefined }, ['panel', 'query'])
  const sortBy = (field: GridField) => {
    if (query.sort !== field.id)
      return visit(url, { sort: field.id, dir: undefined, page: undefined })
    if (query.dir === 'asc') return visit(url, { dir: 'desc', page: undefined })
    visit(url, { sort: undefined, dir: undefined, page: undefined })
  }
  const submitSearch = (event: FormEvent) => {
    event.preventDefault()
    visit(url, { search: search.trim(), page: undefined })
  }
  const closePanel = () => {
    const row = query.row
    openRow(null)
    requestAnimationFrame(() =>
      document.querySelector<HTMLElement>(`[data-open-row="${row}"]`)?.focus()
    )
  }

  return (
    <>
      <Head title={table.name} />
      <nav aria-label="Breadcrumb" className="muted small breadcrumb">
        <Link href="/admin/tables">Tables</Link> ›{' '}
        <Link href={`/admin/books/${table.bookId}`}>
          {table.owner} / {table.book}
        </Link>
      </nav>
      <h1>{table.name}</h1>
      <p className="muted small">
        {counted(fields.length, 'field')} ·{' '}
        {views.length ? `views: ${views.map((view) => view.name).join(', ')}` : 'no view'} ·{' '}
        <span role="status">
          {following ? 'cells follow changes live' : 'live changes not connected'}
        </span>
      </p>
      {!edit.allowed && (
        <p className="info-box small" data-read-only>
          Read only for you. {edit.reason}
        </p>
      )}
      {shared.errors?.form && (
        <p className="error-box" role="alert">
          {shared.errors.form}
        </p>
      )}
      <section className="grid-toolbar" aria-label="Grid controls">
        <form role="search" className="grid-search" onSubmit={submitSearch} data-search="rows">
          <label className="sr-only" htmlFor="grid-search">
            Search rows
          </label>
          <input
            id="grid-search"
            type="search"
            name="search"
            value={search}
            placeholder="Search the text of every row"
            onChange={(event) => setSearch(event.target.value)}
          />
          <button type="submit">Search</button>
        </form>
        <FilterSelect
          className="inline-label"
          label="View"
          name="view"
          value={String(query.view ?? '')}
          all="All rows"
          options={views.map((view) => [String(view.id), view.name] as const)}
          onChange={(view) => visit(url, { view: view || undefined, page: undefined })}
        />
        <label className="inline-label">
          Rows per page
          <select
            name="perPage"
            value={rows.perPage}
            onChange={(event) => visit(url, { perPage: event.target.value, page: undefined })}
          >
            {props.pageSizes.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          aria-expanded={open === 'filters'}
          aria-controls="grid-filters"
          onClick={() => setOpen(open === 'filters' ? null : 'filters')}
        >
          Filters{query.filters.length ? ` (${query.filters.length})` : ''}
        </button>
        <button
          type="button"
          aria-expanded={open === 'columns'}
          aria-controls="grid-columns"
          onClick={() => setOpen(open === 'columns' ? null : 'columns')}
        >
          Columns{hidden.size ? ` (${fields.length - hidden.size} of ${fields.length})` : ''}
        </button>
        {/* Filters the server refused would refuse the export too. */}
        {!rows.error && (
          <a className="button-link" href={exportHref} download data-export>
            Export as CSV
          </a>
        )}
      </section>
      {open === 'filters' && <FilterEditor id="grid-filters" fields={fields} query={query} />}
      {open === 'columns' && (
        <ColumnPicker id="grid-columns" fields={fields} hidden={hidden} onChange={setHidden} />
      )}
      {rows.built.length > 0 && (
        <p className="info-box small" role="status" data-index-built>
          {rows.built
            .map(
              (index) => `An index on ${index.field} was built (${(index.ms / 1000).toFixed(1)} s)`
            )
            .join('; ')}
          : this table is big, and sorting or searching it reads the index from now on.
        </p>
      )}
      {rows.error && (
        <p className="error-box" role="alert" data-filter-error>
          These filters cannot be applied: {rows.error}
        </p>
      )}
      <div className={panel ? 'grid-layout with-panel' : 'grid-layout'}>
        <Card>
          <div
            className="table-wrap"
            role="region"
            aria-label={`Rows of ${table.name}`}
            tabIndex={0}
          >
            <table className="grid">
              <caption className="sr-only">
                Rows of {table.name}, page {rows.page}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  {shown.map(({ field }) => (
                    <th
                      scope="col"
                      key={field.id}
                      aria-sort={
                        query.sort === field.id
                          ? query.dir === 'asc'
                            ? 'ascending'
                            : 'descending'
                          : undefined
                      }
                    >
                      {field.sortable ? (
                        <button
                          type="button"
                          className="sort"
                          onClick={() => sortBy(field)}
                          title={field.type}
                          data-sort={field.id}
                        >
                          {field.name}
                          <span aria-hidden="true">
                            {query.sort === field.id ? (query.dir === 'asc' ? ' ▲' : ' ▼') : ''}
                          </span>
                        </button>
                      ) : (
                        <span title={field.type}>{field.name}</span>
                      )}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.items.map((row) => (
                  <tr
                    key={row.id}
                    data-row={row.id}
                    className={query.row === row.id ? 'selected' : ''}
                  >
                    <th scope="row">
                      <button
                        type="button"
                        className="link"
                        aria-label={`Open row ${row.number}`}
                        aria-expanded={query.row === row.id}
                        aria-controls="row-panel"
                        data-open-row={row.id}
                        onClick={() => openRow(query.row === row.id ? null : row.id)}
                      >
                        {row.number}
                      </button>
                    </th>
                    {shown.map(({ field, index }) => (
                      <td
                        key={field.id}
                        data-field={field.id}
                        className={changed.has(`${row.id}:${index}`) ? 'changed' : undefined}
                      >
                        {edit.allowed && field.editor ? (
                          <EditableCell
                            tableId={table.id}
                            rowId={row.id}
                            rowNumber={row.number}
                            field={field}
                            text={row.cells[index]}
                          />
                        ) : (
                          <span title={row.cells[index]}>{row.cells[index]}</span>
                        )}
                      </td>
                    ))}
                  </tr>
                ))}
                {rows.items.length === 0 && (
                  <tr>
                    <td colSpan={shown.length + 1} className="muted">
                      {query.search || query.filters.length || query.view
                        ? 'No row matches.'
                        : 'No row.'}
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          <GridPager page={rows.page} perPage={rows.perPage} total={rows.total} more={rows.more} />
        </Card>
        {panel && <RowPanel id="row-panel" panel={panel} onClose={closePanel} />}
      </div>
    </>
  )
}
