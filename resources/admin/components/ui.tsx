import { Link, router, usePage } from '@inertiajs/react'
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js'

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip)

/** Previous / next links of a list paged on the server (keeps the other query parameters). */
export function Pager(props: {
  page: number
  perPage: number
  total: number
  path: string
  query?: Record<string, unknown>
}) {
  const pages = Math.max(1, Math.ceil(props.total / props.perPage))
  const href = (page: number) => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(props.query ?? {}))
      if (value !== undefined && value !== null && value !== '') params.set(key, String(value))
    params.set('page', String(page))
    return `${props.path}?${params}`
  }
  return (
    <div className="pager">
      {props.page > 1 ? (
        <Link href={href(props.page - 1)} preserveScroll rel="prev">
          ‹ Previous
        </Link>
      ) : (
        <span className="muted">‹ Previous</span>
      )}
      <span className="muted">
        Page {props.page} of {pages} · {props.total.toLocaleString('en')} in all
      </span>
      {props.page < pages ? (
        <Link href={href(props.page + 1)} preserveScroll rel="next">
          Next ›
        </Link>
      ) : (
        <span className="muted">Next ›</span>
      )}
    </div>
  )
}

/** A search box whose query runs on the server (GET with ?search=). */
export function SearchBox(props: { path: string; value: string; placeholder?: string }) {
  const [value, setValue] = useState(props.value)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    router.get(props.path, value ? { search: value } : {}, { preserveState: true })
  }
  return (
    <form className="search" onSubmit={submit} role="search">
      <input
        type="search"
        name="search"
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
