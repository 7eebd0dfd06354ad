import { Head, Link, router, usePoll } from '@inertiajs/react'
import { useConsoleFeed } from '../components/live_feed'
import { ActivityItem, BarChart, Card, formatDate } from '../components/ui'

/** The dashboard's figures, charts and activity come from its parts: the kernel's and each plugin's. */
interface Figure {
  key: string
  label: string
  value: number
  href?: string
}
interface Chart {
  key: string
  title: string
  unit: string
  hours: number[]
  counts: number[]
}
interface ActivityLine {
  at: number
  actor?: string
  text: string
  href?: string
}
interface Props {
  security: { totpEnrolled: boolean }
  live: { channel: string; token: string }
  figures: Figure[]
  queue: { ok: boolean; counts: Record<string, number> | null }
  charts: Chart[]
  activity: ActivityLine[]
}

const CHART_COLORS = ['#3b6fd4', '#2a9d6f', '#b5651d', '#7a4fb3']

const hourLabel = (ms: number) => `${String(new Date(ms).getHours()).padStart(2, '0')}h`

const FIGURES = ['figures', 'queue', 'charts', 'activity']

/**
 * Reloads the figures when the server says they changed (Transmit channel
 * admin/dashboard, authorized by the page's token), and every minute anyway
 * (queue health changes without an event).
 */
function useLiveFigures(live: Props['live']) {
  usePoll(60_000, { only: FIGURES })
  useConsoleFeed(live, () => router.reload({ only: FIGURES }))
}

/** Counts, queue health, activity and hourly charts; refreshed in place when they change. */
export default function Dashboard({ figures, queue, charts, activity, live, security }: Props) {
  useLiveFigures(live)
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
        {figures.map((figure) => (
          <div className="figure" key={figure.key} data-figure={figure.key}>
            <span className="value">{figure.value.toLocaleString('en')}</span>
            <span className="label">
              {figure.href ? <Link href={figure.href}>{figure.label}</Link> : figure.label}
            </span>
          </div>
        ))}
      </div>
      {charts.length > 0 && (
        <div className="grid2">
          {charts.map((chart, index) => (
            <Card title={chart.title} key={chart.key}>
              <BarChart
                label={chart.unit}
                color={CHART_COLORS[index % CHART_COLORS.length]}
                labels={chart.hours.map(hourLabel)}
                values={chart.counts}
              />
            </Card>
          ))}
        </div>
      )}
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
            {activity.map((line, index) => (
              <ActivityItem key={`${line.at}-${index}`}>
                <span className="muted">{formatDate(line.at)}</span>{' '}
                {line.actor && <strong>{line.actor}</strong>}{' '}
                {line.href ? <Link href={line.href}>{line.text}</Link> : line.text}
              </ActivityItem>
            ))}
          </ul>
        </Card>
      </div>
    </>
  )
}
