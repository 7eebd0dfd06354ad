import { Link, router, usePage } from '@inertiajs/react'
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js'

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip)

/** The current URL with some query parameters changed (undefined or '' drops one). */
function withQuery(url: string, changes: Record<string, string | number | undefined>) {
  const [path, query = ''] = url.split('?')
  const params = new URLSearchParams(query)
  for (const [key, value] of Object.entries(changes))
    if (value === undefined || value === '') params.delete(key)
    else params.set(key, String(value))
  const rest = params.toString()
  return rest ? `${path}?${rest}` : path
}

/** A list's query parameters: `page`/`search`, or `<name>Page`/`<name>Search` on a page of several lists. */
const paramsOf = (name?: string) =>
  name ? { page: `${name}Page`, search: `${name}Search` } : { page: 'page', search: 'search' }

/**
 * Previous / next links of a list paged on the server. They keep every other
 * query parameter of the page (the other lists' pages and searches); with
 * `only`, a visit reloads just those props (an Inertia partial reload).
 */
export function Pager(props: {
  page: number
  perPage: number
  total: number
  name?: string
  only?: string[]
}) {
  const { url } = usePage()
  const param = paramsOf(props.name).page
  const pages = Math.max(1, Math.ceil(props.total / props.perPage))
  const link = (page: number, rel: 'prev' | 'next', label: string) => (
    <Link
      href={withQuery(url, { [param]: page > 1 ? page : undefined })}
      only={props.only ?? []}
      preserveState={Boolean(props.only)}
      preserveScroll
      rel={rel}
    >
      {label}
    </Link>
  )
  return (
    <div className="pager" data-pager={props.name ?? 'page'}>
      {props.page > 1 ? (
        link(props.page - 1, 'prev', '‹ Previous')
      ) : (
        <span className="muted">‹ Previous</span>
      )}
      <span className="muted">
        Page {props.page} of {pages} · {props.total.toLocaleString('en')} in all
      </span>
      {props.page < pages ? (
        link(props.page + 1, 'next', 'Next ›')
      ) : (
        <span className="muted">Next ›</span>
      )}
    </div>
  )
}

/**
 * A search box whose query runs on the server: it sets the list's search
 * parameter, goes back to its first page and keeps every other parameter;
 * with `only`, just those props are reloaded.
 */
export function SearchBox(props: {
  value: string
  placeholder?: string
  name?: string
  only?: string[]
}) {
  const { url } = usePage()
  const [value, setValue] = useState(props.value)
  const param = paramsOf(props.name)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    router.get(
      withQuery(url, { [param.search]: value.trim(), [param.page]: undefined }),
      {},
      // `only: undefined` would void Inertia's default (every prop): pass a list.
      { only: props.only ?? [], preserveState: true, preserveScroll: Boolean(props.only) }
    )
  }
  return (
    <form className="search" onSubmit={submit} role="search" data-search={props.name ?? 'search'}>
      <input
        type="search"
        name={param.search}
        value={value}
        placeholder={props.placeholder ?? 'Search'}
        onChange={(event) => setValue(event.target.value)}
      />
      <button type="submit">Search</button>
    </form>
  )
}

/** One column of a DataTable: its header, what a row shows in it, and an optional tooltip. */
export interface Column<Row> {
  header?: ReactNode
  cell: (row: Row) => ReactNode
  /** A tooltip for the cell (a grid's truncated values). */
  title?: (row: Row) => string
  className?: string
}

export interface DataTableProps<Row> {
  rows: Row[]
  columns: Column<Row>[]
  rowKey: (row: Row) => string | number
  /** What the table says when it has no row ('None' by default). */
  empty?: ReactNode
  className?: string
  rowData?: (row: Row) => Record<`data-${string}`, string | number>
  /** The table's name for screen readers (its scrolling region is announced with it). */
  label?: string
}

/**
 * The console's table: a header row when a column has a header, one row per
 * item, and one muted line when there is none. `rowData` adds data-*
 * attributes to a row (tests and scripts find rows by them).
 */
export function DataTable<Row>(props: DataTableProps<Row>) {
  const headed = props.columns.some((column) => column.header !== undefined)
  // The wrapper scrolls sideways on a phone: keyboard users reach it (tabIndex) and hear its name.
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={props.label ?? 'Table'}>
      <table className={props.className}>
        {headed && (
          <thead>
            <tr>
              {props.columns.map((column, index) => (
                <th key={index} className={column.className}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
        )}
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)} {...props.rowData?.(row)}>
              {props.columns.map((column, index) => (
                <td key={index} className={column.className} title={column.title?.(row)}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
          {props.rows.length === 0 && (
            <tr>
              <td colSpan={props.columns.length} className="muted">
                {props.empty ?? 'None'}
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  )
}

/** A list read one page at a time from the server (see #core/paging). */
export interface PagedList<Row> {
  items: Row[]
  total: number
  page: number
  perPage: number
  search: string
}

/**
 * A list paged and searched on the server: a search box (with a
 * `placeholder`), its table and its pager. `name` is the list's prefix in the
 * query string and the page's prop holding it, so on a page of several lists
 * searching or paging one reloads that one alone.
 */
export function ServerList<Row>(
  props: {
    list: PagedList<Row>
    name?: string
    placeholder?: string
  } & Omit<DataTableProps<Row>, 'rows'>
) {
  const { list, name, placeholder, ...table } = props
  const only = name ? [name] : undefined
  return (
    <>
      {placeholder !== undefined && (
        <SearchBox name={name} only={only} value={list.search} placeholder={placeholder} />
      )}
      <DataTable rows={list.items} {...table} />
      <Pager {...list} name={name} only={only} />
    </>
  )
}

/** A button that asks before it acts (every destructive action). */
export function ConfirmButton(props: {
  label: string
  question: string
  onConfirm: () => void
  danger?: boolean
}) {
  const [asking, setAsking] = useState(false)
  if (!asking)
    return (
      <button
        className={props.danger ? 'danger' : ''}
        onClick={() => setAsking(true)}
        type="button"
      >
        {props.label}
      </button>
    )
  return (
    <span className="confirm" role="alertdialog">
      <span>{props.question}</span>
      <button
        className="danger"
        type="button"
        onClick={() => {
          setAsking(false)
          props.onConfirm()
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}

/** The message of a field's error flashed by the server, if any. */
export function FieldError({ name }: { name: string }) {
  const { props } = usePage<{ errors?: Record<string, string> }>()
  const message = props.errors?.[name]
  return message ? <span className="error">{message}</span> : null
}

export function FormErrors() {
  const { props } = usePage<{ errors?: Record<string, string> }>()
  const messages = Object.values(props.errors ?? {})
  if (!messages.length) return null
  return (
    <div className="error-box" role="alert">
      {messages.map((message) => (
        <div key={message}>{message}</div>
      ))}
    </div>
  )
}

/** A small bar chart of one series (chart.js). */
export function BarChart(props: {
  labels: string[]
  values: number[]
  label: string
  color?: string
}) {
  const canvas = useRef<HTMLCanvasElement>(null)
  const chart = useRef<Chart | null>(null)
  useEffect(() => {
    if (!canvas.current) return
    chart.current = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: [],
        datasets: [{ label: props.label, data: [], backgroundColor: props.color ?? '#3b6fd8' }],
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { display: false } },
        scales: {
          y: { beginAtZero: true, ticks: { precision: 0 } },
          x: { ticks: { maxTicksLimit: 8 } },
        },
      },
    })
    return () => chart.current?.destroy()
  }, [])
  useEffect(() => {
    if (!chart.current) return
    chart.current.data.labels = props.labels
    chart.current.data.datasets[0].data = props.values
    chart.current.update()
  }, [props.labels.join(), props.values.join()])
  return (
    <div className="chart">
      <canvas ref={canvas} aria-label={props.label} role="img" />
    </div>
  )
}

export function Card(props: { title?: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      {(props.title || props.actions) && (
        <header>
          {props.title && <h2>{props.title}</h2>}
          {props.actions}
        </header>
      )}
      {props.children}
    </section>
  )
}

/**
 * A list's filter as a labelled select: the empty value first ("all", or `all`'s words), then
 * each option, a value shown as itself or a [value, words] pair.
 */
export function FilterSelect(props: {
  label: string
  name: string
  value: string
  options: readonly (string | readonly [value: string, words: string])[]
  onChange: (value: string) => void
  all?: string
  className?: string
}) {
  return (
    <label className={props.className}>
      {props.label}{' '}
      <select
        name={props.name}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
      >
        <option value="">{props.all ?? 'all'}</option>
        {props.options.map((option) => {
          const [value, words] = typeof option === 'string' ? [option, option] : option
          return (
            <option key={value} value={value}>
              {words}
            </option>
          )
        })}
      </select>
    </label>
  )
}

export const formatDate = (value: string | number | null) =>
  value === null
    ? '—'
    : new Date(value).toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'short' })

/** A count and its word: `1 field`, `2 fields`, `1,000 entries` (irregular plurals given). */
export const counted = (count: number, word: string, plural = `${word}s`) =>
  `${count.toLocaleString('en')} ${count === 1 ? word : plural}`

/**
 * A line of an activity list: one line on a wide screen, cut with an ellipsis when it is
 * longer; then a "Show all" button (aria-expanded) opens it in full, as a phone shows it.
 */
export function ActivityItem({ children }: { children: ReactNode }) {
  const line = useRef<HTMLSpanElement>(null)
  const [cut, setCut] = useState(false)
  const [open, setOpen] = useState(false)
  // Measured while closed only (an open line wraps and is never cut): a re-render of the list
  // while a line is open (the live feed) must not lose the button that closes it.
  useEffect(() => {
    const element = line.current
    if (!element || open) return
    const measure = () => setCut(element.scrollWidth > element.clientWidth + 1)
    measure()
    window.addEventListener('resize', measure)
    return () => window.removeEventListener('resize', measure)
  }, [children, open])
  return (
    <li className={open ? 'item open' : 'item'}>
      <span className="line" ref={line}>
        {children}
      </span>
      {(cut || open) && (
        <button
          type="button"
          className="link more"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          {open ? 'Show less' : 'Show all'}
        </button>
      )}
    </li>
  )
}
