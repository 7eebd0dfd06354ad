import { Head, router } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import { Card, FilterSelect, ServerList, formatDate, type PagedList } from '../components/ui'

interface Entry {
  id: number
  at: string
  actor: string
  actorId: number | null
  address: string
  kind: string
  what: string
  target: string
  targetType: string
  changes: string
}

interface Filter {
  search: string
  actor: string
  kind: string
  from: string
  to: string
}

interface Props {
  entries: PagedList<Entry>
  filter: Filter
  kinds: { kind: string; label: string }[]
}

/** The query string of a filter (empty fields left out; paging starts again). */
function queryOf(filter: Filter) {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(filter)) if (value) params.set(key, value)
  const text = params.toString()
  return text ? `?${text}` : ''
}

/** Who, what kind, and which days: applied on the server, back to the first page. */
function Filters({ filter, kinds }: { filter: Filter; kinds: Props['kinds'] }) {
  const [draft, setDraft] = useState(filter)
  const set = (key: keyof Filter) => (event: { target: { value: string } }) =>
    setDraft({ ...draft, [key]: event.target.value })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    router.get(`/admin/audit${queryOf(draft)}`, {}, { preserveState: true })
  }
  const clear = () => {
    const empty = { search: '', actor: '', kind: '', from: '', to: '' }
    setDraft(empty)
    router.get('/admin/audit')
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Filter the audit log">
      <label>
        Search
        <input
          type="search"
          name="search"
          value={draft.search}
          onChange={set('search')}
          placeholder="Who, what, target or change"
        />
      </label>
      <label>
        Done by (user code)
        <input name="actor" value={draft.actor} onChange={set('actor')} placeholder="Anyone" />
      </label>
      <FilterSelect
        label="What"
        name="kind"
        value={draft.kind}
        all="Every change"
        options={kinds.map(({ kind, label }) => [kind, label] as const)}
        onChange={(kind) => setDraft({ ...draft, kind })}
      />
      <label>
        From (day)
        <input type="date" name="from" value={draft.from} onChange={set('from')} />
      </label>
      <label>
        To (day)
        <input type="date" name="to" value={draft.to} onChange={set('to')} />
      </label>
      <div className="actions">
        <button type="submit" className="primary">
          Apply
        </button>{' '}
        <button type="button" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  )
}

/** The audit log: every administrative change, newest first, filtered and paged on the server. */
export default function Audit({ entries, filter, kinds }: Props) {
  const csv = `/admin/audit.csv${queryOf(filter)}`
  return (
    <>
      <Head title="Audit log" />
      <h1>Audit log</h1>
      <p className="muted">
        Every administrative change, from the console, the API and the command line. Passwords and
        secrets are recorded as changed, never with their values.
      </p>
      <Card
        actions={
          <a href={csv} download data-csv>
            Download as CSV
          </a>
        }
      >
        <Filters filter={filter} kinds={kinds} />
        <ServerList
          list={entries}
          rowKey={(entry) => entry.id}
          empty="No change matches."
          rowData={(entry) => ({ 'data-kind': entry.kind })}
          columns={[
            { header: 'When', cell: (entry) => formatDate(entry.at) },
            {
              header: 'Who',
              cell: (entry) => (
                <>
                  {entry.actor}
                  <div className="muted">{entry.address}</div>
                </>
              ),
            },
            { header: 'What', cell: (entry) => entry.what },
            { header: 'On', cell: (entry) => entry.target, title: (entry) => entry.target },
            {
              header: 'Change',
              cell: (entry) => (
                <span style={{ display: 'block', whiteSpace: 'normal', minWidth: '14rem' }}>
                  {entry.changes || '—'}
                </span>
              ),
            },
          ]}
        />
      </Card>
    </>
  )
}
