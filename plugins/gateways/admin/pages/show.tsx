import { Head, Link, router } from '@inertiajs/react'
import type { ReactNode } from 'react'
import { Card, ConfirmButton, FormErrors, formatDate } from '@console/components/ui'
import { AllowForm, GatewayState, type Gateway } from './index'
import { SmsState, type Sms } from './deliveries'

interface Props {
  gateway: Gateway
  /** Requests in the current rate-limit window; null when it made none. */
  rate: { used: number; limit: number; resetsIn: number } | null
  messagesIn: { smid: number; sender: string; text: string; created: number }[]
  /** The latest SMS queued for it, newest first. */
  messagesOut: Sms[]
  /** Its SMS in each state of the outbox. */
  outbox: Record<string, number>
}

const Item = ({ label, children }: { label: string; children: ReactNode }) => (
  <div className="kv">
    <span className="muted">{label}</span>
    <span>{children}</span>
  </div>
)

/** One SMS gateway: its state, book, rate limit, the SMS it brought in, and its actions. */
export default function GatewayShow({ gateway, rate, messagesIn, messagesOut, outbox }: Props) {
  const base = `/admin/gateways/sms/${gateway.id}`
  const book = gateway.fixedBook ?? gateway.sessionBook
  return (
    <>
      <Head title={gateway.phone} />
      <p className="muted">
        <Link href="/admin/gateways/sms">SMS gateways</Link> ›
      </p>
      <h1>
        {gateway.phone} <GatewayState gateway={gateway} />
      </h1>
      <FormErrors />
      <div className="grid2">
        <Card title="About">
          <Item label="App">{gateway.appname || '—'}</Item>
          <Item label="Book">
            {gateway.fixedBook
              ? `${gateway.fixedBook} (set by an administrator)`
              : (gateway.sessionBook ?? 'named by the first word of each SMS')}
          </Item>
          <Item label="Asked for">{gateway.requestedBook ?? 'no book'}</Item>
          <Item label="Last asked">
            {formatDate(gateway.requestedAt)}
            {gateway.requestedFrom && ` from ${gateway.requestedFrom}`}
          </Item>
          <Item label="Allowed">{formatDate(gateway.allowedAt)}</Item>
          <Item label="Connected">
            {gateway.registered ? formatDate(gateway.registeredAt) : 'no'}
          </Item>
          <Item label="Last seen">{formatDate(gateway.lastUsedAt)}</Item>
          <Item label="Rate limit">
            <span data-testid="rate">
              {rate
                ? `${rate.used} of ${rate.limit} requests used, resets in ${rate.resetsIn} s`
                : 'no request in the current window'}
            </span>
          </Item>
          {gateway.registered && (
            <div className="row">
              <ConfirmButton
                label="Unregister"
                question={`End ${gateway.phone}'s session? It will have to connect again.`}
                danger
                onConfirm={() => router.post(`${base}/unregister`, {}, { preserveScroll: true })}
              />
            </div>
          )}
        </Card>
        <Card title={gateway.allowed ? 'Change its book' : 'Approve'}>
          <p className="muted small">
            A book here receives every SMS of this gateway; leave it empty to let the phone (or each
            SMS's first word) name the book.
          </p>
          <AllowForm
            phone={gateway.phone}
            book={gateway.fixedBook ?? ''}
            label={gateway.allowed ? 'Save' : 'Approve'}
          />
        </Card>
      </div>
      <Card title="Its SMS queue">
        <div className="figures small">
          {Object.entries(outbox).map(([state, total]) => (
            <div
              key={state}
              className={`figure${state === 'failed' && total > 0 ? ' bad' : ''}`}
              data-figure={`sms-${state}`}
            >
              <span className="value">{total.toLocaleString('en')}</span>
              <span className="label">{state}</span>
            </div>
          ))}
        </div>
        <h3>Latest SMS out</h3>
        <ul className="activity">
          {messagesOut.map((sms) => (
            <li key={sms.id} data-sms={sms.id}>
              <span className="muted">{formatDate(sms.createdAt)}</span> <SmsState sms={sms} /> to{' '}
              <strong>{sms.to}</strong> ({sms.kind}): {sms.text}
              {sms.reason && <span className="muted"> · {sms.reason}</span>}
            </li>
          ))}
          {messagesOut.length === 0 && <li className="muted">Nothing sent through it yet.</li>}
        </ul>
      </Card>
      <Card title="SMS received">
        {book ? (
          <ul className="activity">
            {messagesIn.map((message) => (
              <li key={message.smid}>
                <span className="muted">{formatDate(message.created * 1000)}</span>{' '}
                <strong>{message.sender}</strong>: {message.text}
              </li>
            ))}
            {messagesIn.length === 0 && <li className="muted">No SMS in {book} yet.</li>}
          </ul>
        ) : (
          <p className="muted">
            This gateway has no book of its own: its SMS go to the books they name.
          </p>
        )}
      </Card>
    </>
  )
}
