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
 * Without a total (`more` says whether a next page exists) it shows no count.
 */
export function Pager(props: {
  page: number
  perPage: number
  total?: number
  more?: boolean
  name?: string
  only?: string[]
}) {
  const { url } = usePage()
  const param = paramsOf(props.name).page
  const pages =
    props.total === undefined ? null : Math.max(1, Math.ceil(props.total / props.perPage))
  const hasNext = pages === null ? Boolean(props.more) : props.page < pages
  const link = (page: number, rel: 'prev' | 'next', label: string) => (
    <Link
      href={withQuery(url, { [param]: page > 1 ? page : undefined })}
      only={props.only}
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
        Page {props.page}
        {pages !== null && ` of ${pages} · ${props.total!.toLocaleString('en')} in all`}
      </span>
      {hasNext ? link(props.page + 1, 'next', 'Next ›') : <span className="muted">Next ›</span>}
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
      { only: props.only, preserveState: true, preserveScroll: Boolean(props.only) }
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

export const formatDate = (value: string | number | null) =>
  value === null
    ? '—'
    : new Date(value).toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'short' })
