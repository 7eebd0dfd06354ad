import { Head, router, usePoll } from '@inertiajs/react'
import { Card, ConfirmButton, DataTable, formatDate } from '../components/ui'

interface Instance {
  id: string
  host: string
  pid: number
  version: string
  startedAt: number
  lastSeen: number
  sockets: number
  requestsPerSecond: number
  memory: number
  gone: boolean
  self: boolean
}
interface Probe {
  ok: boolean
  roundTripMs: number
  error: string | null
}
interface Props {
  about: {
    version: string
    build: string
    node: string
    environment: string
    uptimeSeconds: number
    instance: string
  }
  memory: { rss: string; heap: string }
  instances: Instance[]
  stores: {
    database: Probe & {
      kind: string
      version: string
      pool: { used: number; free: number; waiting: number; max: number } | null
    }
    redis: (Probe & { memory: string; clients: string }) | null
  }
  jobs:
    | {
        ok: true
        driver: string
        counts: Record<string, number>
        byName: { name: string; waiting: number; delayed: number; active: number; dead: number }[]
        sampled: boolean
        failed: { id: string; name: string; attempts: number; error: string; failedAt: number }[]
      }
    | { ok: false; error: string }
  sections: { key: string; title: string; ok: boolean; lines: { label: string; value: string }[] }[]
  errors: {
    at: number
    message: string
    error?: string
    reference?: string
    where?: string
    instance: string
  }[]
}

const LIVE = ['memory', 'instances', 'stores', 'jobs', 'sections', 'errors', 'about']

/** A state in words and colour (never colour alone). */
const State = ({ ok, children }: { ok: boolean; children?: string }) => (
  <span className={ok ? 'state ok' : 'state bad'}>{children ?? (ok ? 'OK' : 'Failing')}</span>
)

const Lines = ({ lines }: { lines: [string, React.ReactNode][] }) => (
  <dl className="kv-list">
    {lines.map(([label, value]) => (
      <div className="kv" key={label}>
        <dt className="muted">{label}</dt>
        <dd>{value}</dd>
      </div>
    ))}
  </dl>
)

const megabytes = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`

function duration(seconds: number) {
  const days = Math.floor(seconds / 86400)
  const hours = Math.floor((seconds % 86400) / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  if (days) return `${days} d ${hours} h`
  if (hours) return `${hours} h ${minutes} min`
  return `${minutes} min ${seconds % 60} s`
}

/** Build, instances, database, Redis, jobs, plugins' sections and the last errors; refreshed every 5 s. */
export default function Health(props: Props) {
  usePoll(5_000, { only: LIVE })
  const { about, memory, instances, stores, jobs, sections, errors } = props
  return (
    <>
      <Head title="Health" />
      <h1>Health</h1>
      <div className="grid2">
        <Card title="This server">
          <Lines
            lines={[
              ['Version', about.version],
              ['Build', about.build],
              ['Node.js', about.node],
              ['Mode', about.environment],
              ['Running for', duration(about.uptimeSeconds)],
              ['Memory', `${memory.rss} (heap ${memory.heap})`],
              ['Instance', about.instance],
            ]}
          />
        </Card>
        <Card title="Database">
          <Lines
            lines={[
              ['State', <State ok={stores.database.ok} />],
              ['Kind', stores.database.kind],
              ['Version', stores.database.version],
              ['Round trip', `${stores.database.roundTripMs} ms`],
              [
                'Connections',
                stores.database.pool
                  ? `${stores.database.pool.used} in use, ${stores.database.pool.free} idle, ${stores.database.pool.waiting} waiting (at most ${stores.database.pool.max})`
                  : '—',
              ],
              ...(stores.database.error
                ? ([['Error', stores.database.error]] as [string, string][])
                : []),
            ]}
          />
        </Card>
      </div>
      <div className="grid2">
        <Card title="Redis">
          {stores.redis ? (
            <Lines
              lines={[
                ['State', <State ok={stores.redis.ok} />],
                ['Round trip', `${stores.redis.roundTripMs} ms`],
                ['Memory used', stores.redis.memory],
                ['Clients', stores.redis.clients],
                ...(stores.redis.error
                  ? ([['Error', stores.redis.error]] as [string, string][])
                  : []),
              ]}
            />
          ) : (
            <p className="muted">
              Not configured: one instance, with its job queue in this process. Set REDIS_HOST to
              run several.
            </p>
          )}
        </Card>
        {sections.map((section) => (
          <Card key={section.key} title={section.title}>
            <Lines
              lines={[
                ['State', <State ok={section.ok} />],
                ...section.lines.map((line) => [line.label, line.value] as [string, string]),
              ]}
            />
          </Card>
        ))}
      </div>
      <Card title={`Instances (${instances.length})`}>
        <DataTable
          rows={instances}
          rowKey={(instance) => instance.id}
          rowData={(instance) => ({ 'data-instance': instance.id })}
          columns={[
            {
              header: 'Instance',
              cell: (instance) => `${instance.id}${instance.self ? ' (this one)' : ''}`,
            },
            {
              header: 'State',
              cell: (instance) => (
                <State ok={!instance.gone}>{instance.gone ? 'Not reporting' : 'Running'}</State>
              ),
            },
            { header: 'Last seen', cell: (instance) => formatDate(instance.lastSeen) },
            { header: 'Started', cell: (instance) => formatDate(instance.startedAt) },
            { header: 'Requests/s', cell: (instance) => instance.requestsPerSecond },
            { header: 'Sockets', cell: (instance) => instance.sockets },
            { header: 'Memory', cell: (instance) => megabytes(instance.memory) },
            { header: 'Version', cell: (instance) => instance.version },
          ]}
        />
      </Card>
      <Card title="Background jobs">
        {jobs.ok ? (
          <>
            <p className="muted">Queue: {jobs.driver}</p>
            <div className="figures small">
              {Object.entries(jobs.counts).map(([state, count]) => (
                <div
                  className={state === 'dead' && count > 0 ? 'figure bad' : 'figure'}
                  key={state}
                >
                  <span className="value">{count}</span>
                  <span className="label">{state === 'dead' ? 'failed' : state}</span>
                </div>
              ))}
            </div>
            <h3>Unfinished jobs by name{jobs.sampled ? ' (first 1,000 of each state)' : ''}</h3>
            <DataTable
              rows={jobs.byName}
              rowKey={(row) => row.name}
              empty="No unfinished job"
              columns={[
                { header: 'Job', cell: (row) => row.name },
                { header: 'Waiting', cell: (row) => row.waiting },
                { header: 'Delayed', cell: (row) => row.delayed },
                { header: 'Running', cell: (row) => row.active },
                { header: 'Failed', cell: (row) => row.dead },
              ]}
            />
            <h3>Failed jobs</h3>
            <DataTable
              rows={jobs.failed}
              rowKey={(job) => job.id}
              rowData={(job) => ({ 'data-job': job.id })}
              empty="No failed job"
              columns={[
                { header: 'Job', cell: (job) => job.name },
                { header: 'Failed', cell: (job) => formatDate(job.failedAt) },
                { header: 'Attempts', cell: (job) => job.attempts },
                { header: 'Error', cell: (job) => job.error, className: 'wrap' },
                {
                  header: 'Action',
                  cell: (job) => (
                    <ConfirmButton
                      label="Retry"
                      question="Run this job again?"
                      onConfirm={() => router.post(`/admin/health/jobs/${job.id}/retry`)}
                    />
                  ),
                },
              ]}
            />
          </>
        ) : (
          <p className="error">The queue does not answer: {jobs.error}</p>
        )}
      </Card>
      <Card title={`Last errors (${errors.length})`}>
        <DataTable
          rows={errors}
          rowKey={(entry) => `${entry.at}-${entry.instance}-${entry.reference ?? entry.message}`}
          empty="No error logged"
          columns={[
            { header: 'When', cell: (entry) => formatDate(entry.at) },
            { header: 'Reference', cell: (entry) => entry.reference ?? '—' },
            {
              header: 'What',
              className: 'wrap',
              cell: (entry) => (
                <>
                  {entry.message}
                  {entry.error && <div className="muted">{entry.error}</div>}
                  {entry.where && <div className="muted">{entry.where}</div>}
                </>
              ),
            },
            { header: 'Instance', cell: (entry) => entry.instance },
          ]}
        />
      </Card>
    </>
  )
}
