import { Head, Link, router, usePage } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import {
  Card,
  ConfirmButton,
  DataTable,
  FilterSelect,
  FormErrors,
  Pager,
  formatDate,
  type PagedList,
} from '@console/components/ui'

interface Attempt {
  attempt: number
  outcome: string
  responseCode: number | null
  response: string | null
  error: string | null
  durationMs: number
  at: number
}

interface Delivery {
  deliveryId: number
  type: string
  idempotencyKey: string
  status: string
  attempts: number
  responseCode: number | null
  error: string | null
  durationMs: number | null
  created: number
  nextAttempt: number | null
  finished: number | null
  log: Attempt[]
}

interface Props {
  webhook: {
    id: number
    b_o: string
    b_c: string
    bookId: number
    catId: number | null
    table: string | null
    url: string
    events: string[]
    fieldIds: number[]
    description: string
    active: boolean
    triggerUpdateUrl: boolean
    disabledReason: string | null
    consecutiveFailures: number
    created: number
    lastModified: number
  }
  deliveries: PagedList<Delivery>
  status: string
  states: string[]
  newSecret: string | null
}

const WRAP = { whiteSpace: 'normal', overflowWrap: 'break-word' } as const
const when = (seconds: number | null) => formatDate(seconds === null ? null : seconds * 1000)

/** A delivery's state as a tag: bad when it failed, plain otherwise. */
function StateTag({ status }: { status: string }) {
  return <span className={status === 'failed' ? 'tag bad' : 'tag'}>{status}</span>
}

/** The attempts of one delivery: outcome, answer code, duration, the answer's first KiB, the error. */
function AttemptLog({ log }: { log: Attempt[] }) {
  if (log.length === 0) return <span className="muted small">Not attempted yet.</span>
  return (
    <details>
      <summary>
        {log.length} attempt{log.length > 1 ? 's' : ''}
      </summary>
      <ol className="small">
        {log.map((entry) => (
          <li key={entry.attempt} style={WRAP}>
            {when(entry.at)} · {entry.outcome}
            {entry.responseCode !== null && ` · HTTP ${entry.responseCode}`} · {entry.durationMs} ms
            {entry.error && <div className="error">{entry.error}</div>}
            {entry.response && (
              <pre
                className="muted"
                style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', margin: '0.2rem 0' }}
              >
                {entry.response}
              </pre>
            )}
          </li>
        ))}
      </ol>
    </details>
  )
}

/** Sends again every failed or cancelled delivery created since the time picked (local time). */
function RedeliverSince({ post }: { post: (path: string, data?: object) => void }) {
  const [since, setSince] = useState(() => {
    const dayAgo = new Date(Date.now() - 86_400_000 - new Date().getTimezoneOffset() * 60_000)
    return dayAgo.toISOString().slice(0, 16)
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    post('/redeliver', { since: Math.floor(new Date(since).getTime() / 1000) })
  }
  return (
    <form className="inline" onSubmit={submit} aria-label="Redeliver failed">
      <label>
        Failed deliveries since
        <input
          type="datetime-local"
          name="since"
          value={since}
          onChange={(event) => setSince(event.target.value)}
          required
        />
      </label>
      <button type="submit">Send them again</button>
    </form>
  )
}

/** One subscription: its settings, its secret's rotation, its state, and its delivery log. */
export default function WebhookShow({ webhook, deliveries, status, states, newSecret }: Props) {
  const { url } = usePage()
  const base = `/admin/webhooks/${webhook.id}`
  const post = (path: string, data: object = {}) =>
    router.post(`${base}${path}`, data as any, { preserveScroll: true })
  const filterBy = (value: string) => {
    const params = new URLSearchParams(url.split('?')[1] ?? '')
    params.delete('page')
    if (value) params.set('status', value)
    else params.delete('status')
    const query = params.toString()
    router.get(query ? `${base}?${query}` : base, {}, { preserveScroll: true })
  }
  const target = webhook.catId
    ? `table ${webhook.table ?? webhook.catId} of ${webhook.b_o}/${webhook.b_c}`
    : `book ${webhook.b_o}/${webhook.b_c}`
  return (
    <>
      <Head title={`Webhook ${webhook.id}`} />
      <p className="muted">
        <Link href="/admin/webhooks">Webhooks</Link> ›{' '}
        <Link
          href={
            webhook.catId
              ? `/admin/webhooks?table=${webhook.catId}`
              : `/admin/webhooks?book=${webhook.bookId}`
          }
        >
          {target}
        </Link>{' '}
        ›
      </p>
      <h1 style={WRAP}>
        Webhook {webhook.id}{' '}
        {webhook.active ? (
          <span className="tag">active</span>
        ) : (
          <span className="tag bad">disabled</span>
        )}
      </h1>
      <FormErrors />
      {newSecret && (
        <p className="notice" data-testid="new-secret" style={WRAP}>
          New signing secret: <code>{newSecret}</code> — copy it now, it is not shown again. The old
          one also signs (a second signature) for 24 hours.
        </p>
      )}
      <div className="row">
        <button type="button" onClick={() => post('/active', { active: !webhook.active })}>
          {webhook.active ? 'Disable' : 'Enable'}
        </button>
        <button type="button" onClick={() => post('/test')}>
          Send a test event
        </button>
        <ConfirmButton
          label="Rotate secret"
          question="Make a new secret? Receivers need it within 24 hours."
          onConfirm={() => post('/rotate')}
        />
        <ConfirmButton
          label="Delete webhook"
          question="Delete this webhook? Waiting deliveries are cancelled."
          danger
          onConfirm={() => post('/delete')}
        />
      </div>
      <Card title="Settings">
        <div className="kv">
          <span className="muted">Sends to</span>
          <span>{webhook.url}</span>
        </div>
        <div className="kv">
          <span className="muted">For</span>
          <span>
            {target}
            {webhook.triggerUpdateUrl && <span className="tag">triggerUpdateUrl</span>}
          </span>
        </div>
        <div className="kv">
          <span className="muted">Events</span>
          <span>{webhook.events.join(', ')}</span>
        </div>
        <div className="kv">
          <span className="muted">Only fields</span>
          <span>{webhook.fieldIds.length ? webhook.fieldIds.join(', ') : 'any field'}</span>
        </div>
        {webhook.description && (
          <div className="kv">
            <span className="muted">Description</span>
            <span>{webhook.description}</span>
          </div>
        )}
        <div className="kv">
          <span className="muted">Failures in a row</span>
          <span>{webhook.consecutiveFailures}</span>
        </div>
        {webhook.disabledReason && (
          <div className="kv">
            <span className="muted">Disabled because</span>
            <span className="error">{webhook.disabledReason}</span>
          </div>
        )}
        <div className="kv">
          <span className="muted">Created, changed</span>
          <span>
            {when(webhook.created)}, {when(webhook.lastModified)}
          </span>
        </div>
      </Card>
      <Card title={`Deliveries (${deliveries.total})`}>
        <div className="row">
          <FilterSelect
            label="State"
            name="status"
            value={status}
            options={states}
            onChange={filterBy}
          />
        </div>
        {webhook.active && <RedeliverSince post={post} />}
        <DataTable
          rows={deliveries.items}
          rowKey={(delivery) => delivery.deliveryId}
          rowData={(delivery) => ({
            'data-delivery': delivery.deliveryId,
            'data-status': delivery.status,
          })}
          empty="No delivery."
          columns={[
            {
              header: 'Delivery',
              cell: (delivery) => (
                <div style={{ ...WRAP, minWidth: 130 }}>
                  #{delivery.deliveryId} {delivery.type}
                  <div className="muted small">{when(delivery.created)}</div>
                </div>
              ),
            },
            {
              header: 'State',
              cell: (delivery) => (
                <>
                  <StateTag status={delivery.status} />
                  {delivery.nextAttempt !== null && (
                    <div className="muted small">next {when(delivery.nextAttempt)}</div>
                  )}
                </>
              ),
            },
            {
              header: 'Last answer',
              cell: (delivery) => (
                <div style={{ ...WRAP, minWidth: 160 }}>
                  {delivery.responseCode !== null ? `HTTP ${delivery.responseCode}` : '—'}
                  {delivery.durationMs !== null && ` · ${delivery.durationMs} ms`}
                  {delivery.error && <div className="error">{delivery.error}</div>}
                </div>
              ),
            },
            {
              header: 'Attempts',
              cell: (delivery) => <AttemptLog log={delivery.log} />,
            },
            {
              cell: (delivery) =>
                webhook.active &&
                delivery.status !== 'sending' && (
                  <button
                    type="button"
                    onClick={() => post('/redeliver', { deliveryId: delivery.deliveryId })}
                  >
                    Send again
                  </button>
                ),
            },
          ]}
        />
        <Pager {...deliveries} />
      </Card>
    </>
  )
}
