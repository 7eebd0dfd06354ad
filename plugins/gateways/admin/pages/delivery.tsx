import { Head, Link } from '@inertiajs/react'
import type { ReactNode } from 'react'
import { Card, DataTable, FormErrors, formatDate } from '@console/components/ui'
import { CHANNEL_NAMES, StateTag, lastAnswer, retry, type Delivery } from './deliveries'

interface Props {
  delivery: Delivery
  attempts: {
    attempt: number
    outcome: string
    status: number | null
    response: string | null
    error: string | null
    durationMs: number
    startedAt: number
  }[]
}

const Item = ({ label, children }: { label: string; children: ReactNode }) => (
  <div className="kv">
    <span className="muted">{label}</span>
    <span>{children}</span>
  </div>
)

/** One delivery: where it goes, its state, every attempt with the provider's answer, and a retry. */
export default function DeliveryShow({ delivery, attempts }: Props) {
  return (
    <>
      <Head title={`Delivery ${delivery.id}`} />
      <p className="muted">
        <Link href="/admin/gateways/deliveries">Deliveries</Link> ›
      </p>
      <h1>
        Delivery {delivery.id} <StateTag state={delivery.state} />
      </h1>
      <FormErrors />
      <Card title="About">
        <Item label="Channel">{CHANNEL_NAMES[delivery.channel] ?? delivery.channel}</Item>
        <Item label="To">
          {delivery.to}
          {delivery.about && ` · ${delivery.about}`}
        </Item>
        <Item label="Event">{delivery.eventType}</Item>
        <Item label="Tries">
          {delivery.attempts} of {delivery.maxAttempts}
        </Item>
        <Item label="Queued">{formatDate(delivery.createdAt)}</Item>
        {delivery.nextAttemptAt !== null && (
          <Item label="Next try">{formatDate(delivery.nextAttemptAt)}</Item>
        )}
        <Item label="Finished">{formatDate(delivery.finishedAt)}</Item>
        <Item label="Last answer">{lastAnswer(delivery)}</Item>
        {delivery.state !== 'sending' && delivery.state !== 'delivered' && (
          <div className="row">
            <button type="button" onClick={() => retry(delivery.id)}>
              {delivery.state === 'pending' ? 'Send now' : 'Send again'}
            </button>
          </div>
        )}
      </Card>
      <Card title="Attempts">
        <DataTable
          rows={attempts}
          rowKey={(attempt) => attempt.attempt}
          empty="Not tried yet."
          columns={[
            { header: '#', cell: (attempt) => attempt.attempt },
            { header: 'When', cell: (attempt) => formatDate(attempt.startedAt) },
            { header: 'Outcome', cell: (attempt) => attempt.outcome },
            {
              header: 'Answer',
              cell: (attempt) =>
                [attempt.status === null ? 'no answer' : `HTTP ${attempt.status}`, attempt.error]
                  .filter(Boolean)
                  .join(' · '),
            },
            {
              header: 'Took',
              cell: (attempt) => `${attempt.durationMs} ms`,
              className: 'hide-sm',
            },
            {
              header: 'Provider said',
              cell: (attempt) => attempt.response?.slice(0, 200) ?? '—',
              title: (attempt) => attempt.response ?? '',
              className: 'hide-sm',
            },
          ]}
        />
      </Card>
    </>
  )
}
