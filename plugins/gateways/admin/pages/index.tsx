import { Head, Link, router, useForm } from '@inertiajs/react'
import type { FormEvent } from 'react'
import {
  Card,
  FieldError,
  FormErrors,
  ServerList,
  formatDate,
  type PagedList,
} from '@console/components/ui'

export interface Gateway {
  id: number
  phone: string
  allowed: boolean
  registered: boolean
  appname: string
  fixedBook: string | null
  requestedBook: string | null
  sessionBook: string | null
  requestedFrom: string | null
  requestedAt: string | null
  allowedAt: string | null
  registeredAt: string | null
  lastUsedAt: string | null
}

interface Props {
  gateways: PagedList<Gateway>
}

/** Pending, allowed (no session yet) or registered (a live sesskey). */
export function GatewayState({ gateway }: { gateway: Gateway }) {
  if (!gateway.allowed) return <span className="tag bad">waiting for approval</span>
  return <span className="tag">{gateway.registered ? 'connected' : 'allowed, not connected'}</span>
}

/** The form behind `node ace gateway:allow PHONE [--book owner/code]`. */
export function AllowForm(props: { phone?: string; book?: string; label: string }) {
  const form = useForm({ phone: props.phone ?? '', book: props.book ?? '' })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    form.transform((data) => (data.book.trim() === '' ? { phone: data.phone } : data))
    form.post('/admin/gateways/sms/allow', { preserveScroll: true })
  }
  return (
    <form className="inline" onSubmit={submit} aria-label={props.label}>
      <label>
        Phone number
        <input
          name="phone"
          value={form.data.phone}
          placeholder="+33612345678"
          readOnly={props.phone !== undefined}
          onChange={(event) => form.setData('phone', event.target.value)}
          required
        />
        <FieldError name="phone" />
      </label>
      <label>
        Book for its messages (optional)
        <input
          name="book"
          value={form.data.book}
          placeholder="owner/book"
          onChange={(event) => form.setData('book', event.target.value)}
        />
        <FieldError name="book" />
      </label>
      <button type="submit" className="primary" disabled={form.processing}>
        {props.label}
      </button>
    </form>
  )
}

/** SMS gateways: registrations waiting for approval first, then the allowed ones. */
export default function GatewaysIndex({ gateways }: Props) {
  const approve = (gateway: Gateway) =>
    router.post('/admin/gateways/sms/allow', { phone: gateway.phone }, { preserveScroll: true })
  return (
    <>
      <Head title="SMS gateways" />
      <h1>SMS gateways</h1>
      <p className="muted">
        Phones that forward the SMS they receive into books. A phone can connect only once its
        number is allowed here (or by the server's command line).
      </p>
      <FormErrors />
      <Card title="Allow a number">
        <AllowForm label="Allow" />
      </Card>
      <Card title={`Gateways (${gateways.total})`}>
        <ServerList
          list={gateways}
          placeholder="Number or app"
          rowKey={(gateway) => gateway.id}
          rowData={(gateway) => ({ 'data-gateway': gateway.phone })}
          empty="No gateway yet: a phone appears here when it tries to connect."
          columns={[
            {
              header: 'Number',
              cell: (gateway) => (
                <>
                  <Link href={`/admin/gateways/sms/${gateway.id}`}>{gateway.phone}</Link>
                  <div>
                    <GatewayState gateway={gateway} />
                  </div>
                </>
              ),
            },
            {
              header: 'Book',
              cell: (gateway) => (
                <div style={{ whiteSpace: 'normal', wordBreak: 'break-word' }}>
                  {gateway.fixedBook ??
                    gateway.sessionBook ??
                    (gateway.requestedBook ? (
                      <span className="muted">asks for {gateway.requestedBook}</span>
                    ) : (
                      <span className="muted">named by each SMS</span>
                    ))}
                </div>
              ),
            },
            { header: 'App', cell: (gateway) => gateway.appname || '—', className: 'hide-sm' },
            {
              header: 'Last seen',
              cell: (gateway) => formatDate(gateway.lastUsedAt ?? gateway.requestedAt),
              className: 'hide-sm',
            },
            {
              cell: (gateway) =>
                !gateway.allowed && (
                  <button type="button" className="primary" onClick={() => approve(gateway)}>
                    Approve
                  </button>
                ),
            },
          ]}
        />
      </Card>
    </>
  )
}
