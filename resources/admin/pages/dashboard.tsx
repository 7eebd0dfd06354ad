import { useEffect } from 'react'
import { Head, Link, router, usePoll } from '@inertiajs/react'
import { Transmit } from '@adonisjs/transmit-client'
import { BarChart, Card, formatDate } from '../components/ui'

interface Series {
  hours: number[]
  counts: number[]
}
interface Props {
  security: { totpEnrolled: boolean }
  live: { channel: string; token: string }
  counts: {
    users: number
    books: number
    messages: number
    tables: number
    rows: number
    sesskeys: number
    authSessions: number
  }
  queue: { ok: boolean; counts: Record<string, number> | null }
  charts: { messages: Series; rowWrites: Series }
  activity: {
    messages: { smid: number; text: string; at: number; book: string; author: string }[]
    users: { id: number; code: string; email: string | null; createdAt: string }[]
  }
}

const hourLabel = (ms: number) => `${String(new Date(ms).getHours()).padStart(2, '0')}h`

const FIGURES = ['counts', 'queue', 'charts', 'activity']

/**
 * Reloads the figures when the server says they changed (Transmit channel
 * admin/dashboard, authorized by the page's token), and every minute anyway
 * (queue health changes without an event).
 */
function useLiveFigures(live: Props['live']) {
  usePoll(60_000, { only: FIGURES })
  useEffect(() => {
    const transmit = new Transmit({
      baseUrl: window.location.origin,
      beforeSubscribe: (request) => request.headers.set('X-Console-Token', live.token),
    })
    const subscription = transmit.subscription(live.channel)
    subscription.onMessage(() => router.reload({ only: FIGURES }))
    subscription.create().catch(() => {})
    return () => {
      subscription.delete().catch(() => {})
      transmit.close()
    }
  }, [live.channel, live.token])
}

/** Counts, queue health, activity and hourly charts; refreshed in place when they change. */
export default function Dashboard({ counts, queue, charts, activity, live, security }: Props) {
  useLiveFigures(live)
  const figures: [string, number, string?][] = [
    ['Users', counts.users, '/admin/users'],
    ['Books', counts.books, '/admin/books'],
    ['Messages', counts.messages],
    ['Tables', counts.tables, '/admin/tables'],
    ['Rows', counts.rows],
    ['Sesskeys', counts.sesskeys],
    ['Auth sessions', counts.authSessions],
  ]
  return (
    <>
      <Head title="Dashboard" />
      <h1>Dashboard</h1>
      {!security.totpEnrolled && (
        <p className="warning-box" role="alert" data-testid="totp-warning">
          Your account has no second factor: anyone with your password can use this console. In
          production the console requires one.{' '}
          <Link href="/admin/account">Set up two-factor authentication</Link>
        </p>
      )}
      <div className="figures">
        {figures.map(([label, value, href]) => (
          <div className="figure" key={label} data-figure={label.toLowerCase()}>
            <span className="value">{value.toLocaleString('en')}</span>
            <span className="label">{href ? <Link href={href}>{label}</Link> : label}</span>
          </div>
        ))}
      </div>
      <div className="grid2">
        <Card title="Messages per hour (last 24 h)">
          <BarChart
            label="messages"
            labels={charts.messages.hours.map(hourLabel)}
            values={charts.messages.counts}
          />
        </Card>
        <Card title="Row writes per hour (last 24 h)">
          <BarChart
            label="row writes"
            color="#2a9d6f"
            labels={charts.rowWrites.hours.map(hourLabel)}
            values={charts.rowWrites.counts}
          />
        </Card>
      </div>
      <div className="grid2">
        <Card title="Job queue">
          {queue.ok && queue.counts ? (
            <div className="figures small">
              {Object.entries(queue.counts).map(([state, count]) => (
                <div
                  className={state === 'dead' && count > 0 ? 'figure bad' : 'figure'}
                  key={state}
                >
                  <span className="value">{count}</span>
                  <span className="label">{state}</span>
                </div>
              ))}
            </div>
          ) : (
            <p className="error">The queue does not answer.</p>
          )}
        </Card>
        <Card title="Recent activity">
          <ul className="activity">
            {activity.messages.map((message) => (
              <li key={message.smid}>
                <span className="muted">{formatDate(message.at)}</span>{' '}
                <strong>{message.author}</strong> in {message.book}: {message.text}
              </li>
            ))}
            {activity.users.map((user) => (
              <li key={`u${user.id}`}>
                <span className="muted">{formatDate(user.createdAt)}</span> new user{' '}
                <Link href={`/admin/users/${user.id}`}>{user.code}</Link>
              </li>
            ))}
          </ul>
        </Card>
      </div>
    </>
  )
}
