import { Head, Link, router, usePage } from '@inertiajs/react'
import {
  Card,
  FilterSelect,
  FormErrors,
  ServerList,
  formatDate,
  type PagedList,
} from '@console/components/ui'

export interface Delivery {
  id: number
  channel: string
  recipient: string
  /** Who it goes to, in words (a device's kind and owner, a user, an address). */
  to: string
  eventType: string
  about: string
  state: 'pending' | 'sending' | 'delivered' | 'failed' | 'cancelled'
  attempts: number
  maxAttempts: number
  nextAttemptAt: number | null
  lastStatus: number | null
  lastError: string | null
  createdAt: number
  finishedAt: number | null
}

/** An SMS of the gateways' outbox. */
export interface Sms {
  id: number
  gatewayId: number | null
  gateway: string | null
  to: string
  kind: string
  text: string
  state: string
  attempts: number
  notBefore: number
  reason: string | null
  createdAt: number
  updatedAt: number
}

interface Props {
  deliveries: PagedList<Delivery>
  filter: { channel: string; state: string; smsState: string }
  channels: string[]
  states: string[]
  counts: { channel: string; state: string; total: number }[]
  /** Paged on the server: smsPage / smsSearch / smsState. */
  sms: PagedList<Sms>
  smsStates: string[]
  smsCounts: Record<string, number>
}

/** Channel names in plain words. */
export const CHANNEL_NAMES: Record<string, string> = {
  push_fcm: 'Push, Android (FCM)',
  push_apns: 'Push, iPhone (APNs)',
  push_web: 'Push, browser',
  mail: 'E-mail',
  reminder: 'Event reminder',
  alarm: 'Web alarm',
}

export function SmsState({ sms }: { sms: Sms }) {
  return <span className={sms.state === 'failed' ? 'tag bad' : 'tag'}>{sms.state}</span>
}

export function StateTag({ state }: { state: Delivery['state'] }) {
  const bad = state === 'failed' || state === 'cancelled'
  return <span className={bad ? 'tag bad' : 'tag'}>{state}</span>
}

/** The last answer of a delivery: the provider's status and the error, if any. */
export const lastAnswer = (delivery: Delivery) =>
  [delivery.lastStatus === null ? null : `HTTP ${delivery.lastStatus}`, delivery.lastError]
    .filter(Boolean)
    .join(' · ') || '—'

export const retry = (id: number) =>
  router.post(`/admin/gateways/deliveries/${id}/retry`, {}, { preserveScroll: true })

/** Push notifications and e-mails the gateways send, with their state, log and a retry. */
export default function Deliveries(props: Props) {
  const { deliveries, filter, channels, states, counts, sms, smsStates, smsCounts } = props
  const { url } = usePage()
  const choose = (change: Partial<Props['filter']>) => {
    const params = new URLSearchParams(url.split('?')[1] ?? '')
    for (const [key, value] of Object.entries(change))
      if (value) params.set(key, value)
      else params.delete(key)
    params.delete(change.smsState === undefined ? 'page' : 'smsPage')
    router.get(`/admin/gateways/deliveries?${params}`, {}, { preserveState: true })
  }
  const total = (state: string) =>
    counts
      .filter((row) => row.state === state && (!filter.channel || row.channel === filter.channel))
      .reduce((sum, row) => sum + row.total, 0)
  return (
    <>
      <Head title="Deliveries" />
      <h1>Outgoing deliveries</h1>
      <p className="muted">
        Every push notification, e-mail and event reminder is queued here, then sent and retried
        until it gets through; a failed one can be sent again. SMS wait below until a gateway phone
        collects them.
      </p>
      <FormErrors />
      <div className="figures small">
        {states.map((state) => (
          <div
            key={state}
            className={`figure${state === 'failed' && total(state) > 0 ? ' bad' : ''}`}
            data-figure={state}
          >
            <span className="value">{total(state).toLocaleString('en')}</span>
            <span className="label">{state}</span>
          </div>
        ))}
      </div>
      <Card title={`Deliveries (${deliveries.total.toLocaleString('en')})`}>
        <div className="row">
          <FilterSelect
            label="Channel"
            name="channel"
            value={filter.channel}
            options={channels.map((channel) => [channel, CHANNEL_NAMES[channel] ?? channel])}
            onChange={(channel) => choose({ channel })}
          />
          <FilterSelect
            label="State"
            name="state"
            value={filter.state}
            options={states}
            onChange={(state) => choose({ state })}
          />
        </div>
        <ServerList
          list={deliveries}
          placeholder="Recipient or event"
          rowKey={(delivery) => delivery.id}
          rowData={(delivery) => ({ 'data-delivery': delivery.id, 'data-state': delivery.state })}
          empty="No delivery matches."
          columns={[
            {
              header: '#',
              cell: (delivery) => (
                <Link href={`/admin/gateways/deliveries/${delivery.id}`}>{delivery.id}</Link>
              ),
            },
            {
              header: 'State',
              cell: (delivery) => (
                <div className="row">
                  <StateTag state={delivery.state} />
                  {(delivery.state === 'failed' || delivery.state === 'cancelled') && (
                    <button type="button" onClick={() => retry(delivery.id)}>
                      Retry
                    </button>
                  )}
                </div>
              ),
            },
            {
              header: 'To',
              cell: (delivery) => (
                <div style={{ whiteSpace: 'normal', wordBreak: 'break-word' }}>
                  {CHANNEL_NAMES[delivery.channel] ?? delivery.channel}
                  <div className="muted small">
                    {delivery.to}
                    {delivery.about && ` · ${delivery.about}`}
                  </div>
                </div>
              ),
            },
            { header: 'Event', cell: (delivery) => delivery.eventType, className: 'hide-sm' },
            {
              header: 'Tries',
              cell: (delivery) => `${delivery.attempts}/${delivery.maxAttempts}`,
              className: 'hide-sm',
            },
            {
              header: 'Last answer',
              cell: (delivery) => lastAnswer(delivery),
              title: (delivery) => delivery.lastError ?? '',
              className: 'hide-sm',
            },
            {
              header: 'Queued',
              cell: (delivery) => formatDate(delivery.createdAt),
              className: 'hide-sm',
            },
          ]}
        />
      </Card>
      <Card title={`SMS (${sms.total.toLocaleString('en')})`}>
        <p className="muted small">
          In the queue: {smsStates.map((state) => `${smsCounts[state] ?? 0} ${state}`).join(' · ')}
        </p>
        <div className="row">
          <FilterSelect
            label="State"
            name="smsState"
            value={filter.smsState}
            options={smsStates}
            onChange={(smsState) => choose({ smsState })}
          />
        </div>
        <ServerList
          list={sms}
          name="sms"
          placeholder="Recipient or gateway number"
          rowKey={(message) => message.id}
          rowData={(message) => ({ 'data-sms': message.id })}
          empty="No SMS matches."
          columns={[
            { header: '#', cell: (message) => message.id },
            { header: 'State', cell: (message) => <SmsState sms={message} /> },
            {
              header: 'To',
              cell: (message) => (
                <div style={{ whiteSpace: 'normal', wordBreak: 'break-word' }}>
                  {message.to} <span className="muted">({message.kind})</span>
                  <div className="muted small">{message.text}</div>
                </div>
              ),
            },
            {
              header: 'Gateway',
              cell: (message) =>
                message.gatewayId === null ? (
                  <span className="muted">the first to collect</span>
                ) : (
                  <Link href={`/admin/gateways/sms/${message.gatewayId}`}>{message.gateway}</Link>
                ),
              className: 'hide-sm',
            },
            {
              header: 'Tries',
              cell: (message) => message.attempts,
              className: 'hide-sm',
            },
            {
              header: 'Why it failed',
              cell: (message) => message.reason ?? '—',
              className: 'hide-sm',
            },
            {
              header: 'Queued',
              cell: (message) => formatDate(message.createdAt),
              className: 'hide-sm',
            },
          ]}
        />
      </Card>
    </>
  )
}
