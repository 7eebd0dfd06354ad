import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import quireConfig from '#config/quire'

/** How long a dependency may take to answer before the instance is reported not ready. */
const PROBE_TIMEOUT_MS = 2_000

export interface ProbeResult {
  ok: boolean
  /** Round trip in milliseconds (of the failed attempt too). */
  ms: number
  /** Why it failed, in a line (never a connection string or a credential). */
  error?: string
}

export interface Readiness {
  /** `starting` until every provider's ready hook ran (listeners bound, the bus connected). */
  status: 'ok' | 'starting' | 'unavailable'
  checks: { started: boolean; database: ProbeResult; redis: ProbeResult | 'not configured' }
}

/**
 * Whether this instance can serve (GET /health/ready, for load balancers and
 * orchestrators): the application finished starting, the database answers a
 * query and, when configured, Redis answers a PING, each within
 * PROBE_TIMEOUT_MS. The HTTP server listens before the providers' ready hooks
 * run (the inbound SMTP listener, AUTH_PORT, the socket bus), so until they
 * ran the instance is `starting`, whatever its dependencies say. Liveness
 * (GET /health) asks nothing of either: a database outage must not get
 * healthy processes killed.
 */
export async function readiness(
  calls: {
    started: () => boolean
    database: () => Promise<unknown>
    redis: (() => Promise<unknown>) | null
  } = {
    started: () => app.isReady,
    database: () => db.connection().rawQuery('SELECT 1'),
    redis: quireConfig.redisEnabled ? pingRedis : null,
  },
  timeoutMs = PROBE_TIMEOUT_MS
): Promise<Readiness> {
  const [database, redis] = await Promise.all([
    probe(calls.database, timeoutMs),
    calls.redis ? probe(calls.redis, timeoutMs) : Promise.resolve('not configured' as const),
  ])
  const started = calls.started()
  const reached = database.ok && (redis === 'not configured' || redis.ok)
  const status = !started ? 'starting' : reached ? 'ok' : 'unavailable'
  return { status, checks: { started, database, redis } }
}

async function pingRedis() {
  const { default: redis } = await import('@adonisjs/redis/services/main')
  return redis.connection().ping()
}

async function probe(call: () => Promise<unknown>, timeoutMs: number): Promise<ProbeResult> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([call(), timeout])
    return { ok: true, ms: elapsed(started) }
  } catch (error) {
    return { ok: false, ms: elapsed(started), error: describe(error) }
  } finally {
    clearTimeout(timer)
  }
}

function elapsed(started: number) {
  return Math.round((performance.now() - started) * 10) / 10
}

/** The error's class of failure (a code such as ECONNREFUSED, or its first line), bounded. */
function describe(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  if (typeof code === 'string') return code
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0].slice(0, 200)
}
