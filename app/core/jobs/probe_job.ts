import { hostname } from 'node:os'
import type { JobHandler } from '#core/plugins/define_plugin'

/** Upper bound on the probe's pause, so a typo cannot occupy a worker for hours. */
const MAX_SLEEP_MS = 10 * 60_000

/**
 * `core.probe`: proves that some worker takes jobs (`node ace queue:probe`)
 * and answers which process ran it. The optional pause keeps it running long
 * enough to watch what happens to a job whose worker is stopped or killed.
 */
const probe: JobHandler = async (payload, job) => {
  const requested = Number((payload as { sleepMs?: unknown } | null)?.sleepMs ?? 0)
  const sleepMs = Number.isFinite(requested) ? Math.min(Math.max(requested, 0), MAX_SLEEP_MS) : 0
  if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs))
  return {
    pid: process.pid,
    host: hostname(),
    attempt: job.attempt,
    finishedAt: new Date().toISOString(),
  }
}

export default probe
