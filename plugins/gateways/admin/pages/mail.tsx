import { Head, Link, router } from '@inertiajs/react'
import {
  Card,
  DataTable,
  FilterSelect,
  Pager,
  formatDate,
  type PagedList,
} from '@console/components/ui'

interface Props {
  mails: PagedList<{
    id: number
    receivedAt: string
    source: string
    sender: string | null
    recipient: string | null
    messageId: string | null
    subject: string | null
    size: number
    outcome: 'stored' | 'duplicate' | 'refused'
    code: string | null
    reason: string | null
    bookId: number | null
    smid: number | null
  }>
  outcome: string
  outcomes: string[]
}

const SOURCES: Record<string, string> = {
  smtp: 'SMTP',
  http: 'relay webhook',
  cli: 'mail:ingest',
}

const kilobytes = (size: number) =>
  `${Math.max(1, Math.round(size / 1024)).toLocaleString('en')} KB`

/** Every e-mail that reached Quire: stored in a book, a duplicate, or refused and why. */
export default function Mail({ mails, outcome, outcomes }: Props) {
  const choose = (value: string) =>
    router.get(
      `/admin/gateways/mail${value ? `?outcome=${value}` : ''}`,
      {},
      { preserveState: true }
    )
  return (
    <>
      <Head title="Inbound mail" />
      <h1>Inbound mail</h1>
      <p className="muted">
        E-mail sent to a book's address becomes a message in that book. Refused mail is stored
        nowhere: only this line of the log remains.
      </p>
      <Card title={`Received (${mails.total.toLocaleString('en')})`}>
        <div className="row">
          <FilterSelect
            label="Outcome"
            name="outcome"
            value={outcome}
            options={outcomes}
            onChange={choose}
          />
        </div>
        <DataTable
          rows={mails.items}
          rowKey={(mail) => mail.id}
          rowData={(mail) => ({ 'data-mail': mail.id, 'data-outcome': mail.outcome })}
          empty="No mail received yet."
          columns={[
            {
              header: 'Received',
              cell: (mail) => (
                <>
                  <span className={mail.outcome === 'refused' ? 'tag bad' : 'tag'}>
                    {mail.outcome}
                  </span>
                  <div className="muted small">{formatDate(mail.receivedAt)}</div>
                </>
              ),
            },
            {
              header: 'Mail',
              cell: (mail) => (
                <div style={{ whiteSpace: 'normal', wordBreak: 'break-word' }}>
                  {mail.subject || <span className="muted">(no subject)</span>}
                  <div className="muted small">
                    from {mail.sender ?? 'unknown'} to {mail.recipient ?? 'unknown'}
                  </div>
                  {mail.reason && (
                    <div className="error small">
                      {mail.code}: {mail.reason}
                    </div>
                  )}
                </div>
              ),
            },
            {
              header: 'Book',
              cell: (mail) =>
                mail.bookId === null ? (
                  '—'
                ) : (
                  <Link href={`/admin/books/${mail.bookId}`}>
                    book {mail.bookId}
                    {mail.smid !== null && `, message ${mail.smid}`}
                  </Link>
                ),
              className: 'hide-sm',
            },
            {
              header: 'Came by',
              cell: (mail) => SOURCES[mail.source] ?? mail.source,
              className: 'hide-sm',
            },
            { header: 'Size', cell: (mail) => kilobytes(mail.size), className: 'hide-sm' },
          ]}
        />
        <Pager {...mails} />
      </Card>
    </>
  )
}
