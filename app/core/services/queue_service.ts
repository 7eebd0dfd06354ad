import { randomUUID } from 'node:crypto'
import type { Logger } from '@adonisjs/core/logger'
import type { JobHandler, LazyDefault } from '#core/plugins/define_plugin'
import {
  PermanentJobError,
  type DeadJob,
  type DispatchOptions,
  type DispatchResult,
  type JobStatus,
  type QueueDriver,
  type RunContext,
} from '#core/jobs/types'

export interface QueueDefaults {
  attempts: number
  backoffMs: number
  concurrency: number
  shutdownTimeoutMs: number
}

/** Where handlers come from: the plugin registry's `jobs` (name → lazy import). */
export type HandlerSource = () => Promise<
  ReadonlyMap<string, { pluginId: string; load: LazyDefault<JobHandler> }>
>

const MAX_KEY_LENGTH = 255

/**
 * The one queue for every plugin's side effects. Plugins name the job they
 * declared in their manifest (`<plugin>.<job>`) and hand a JSON payload;
 * the service applies defaults, checks names, and runs handlers through the
 * driver (BullMQ on Redis, in-process otherwise). Delivery is at least once:
 * a handler may run again after a crash, so it must be idempotent, and the
 * job id it receives is stable across runs for that purpose.
 */
export class QueueService {
  private handlers = new Map<string, Promise<JobHandler>>()

  constructor(
    readonly driver: QueueDriver,
    private source: HandlerSource,
    private defaults: QueueDefaults,
    private logger: Logger
  ) {}

  /**
   * Adds a job. Call it from an after-commit callback so a rolled-back write
   * never fires side effects. Throws for a name no plugin declared, bad
   * options or a payload that is not JSON: those are programming errors.
   */
  async dispatch(
    name: string,
    payload: unknown,
    options: DispatchOptions = {}
  ): Promise<DispatchResult> {
    const known = await this.source()
    if (!known.has(name))
      throw new Error(`No plugin declares the job "${name}" (manifest \`jobs\`)`)
    const attempts = options.attempts ?? this.defaults.attempts
    const backoff = options.backoff ?? this.defaults.backoffMs
    const delay = options.delay ?? 0
    if (!Number.isInteger(attempts) || attempts < 1)
      throw new Error(`Job "${name}": attempts must be an integer >= 1`)
    if (!Number.isFinite(backoff) || backoff < 0)
      throw new Error(`Job "${name}": backoff must be >= 0 ms`)
    if (!Number.isFinite(delay) || delay < 0)
      throw new Error(`Job "${name}": delay must be >= 0 ms`)
    const key = options.idempotencyKey
    if (
      key !== undefined &&
      (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH)
    ) {
      throw new Error(
        `Job "${name}": an idempotency key is a non-empty string of at most ${MAX_KEY_LENGTH} characters`
      )
    }
    // Fails here, at the caller, rather than later in a worker.
    JSON.stringify(payload ?? null)
    return this.driver.add({
      id: randomUUID(),
      name,
      payload: payload ?? null,
      attempts,
      backoff: Math.round(backoff),
      delay: Math.round(delay),
      idempotencyKey: key,
    })
  }

  /** Starts running jobs in this process (idempotent). */
  async startWorker(concurrency = this.defaults.concurrency) {
    if (this.driver.working) return
    await this.driver.startWorker((job) => this.run(job), concurrency)
  }

  get working() {
    return this.driver.working
  }

  status(id: string): Promise<JobStatus | null> {
    return this.driver.status(id)
  }

  /** Newest first. */
  deadLetters(limit = 50): Promise<DeadJob[]> {
    return this.driver.deadLetters(limit)
  }

  retryDead(id: string) {
    return this.driver.retryDead(id)
  }

  purgeDead() {
    return this.driver.purgeDead()
  }

  counts() {
    return this.driver.counts()
  }

  /** Unfinished jobs per name and state (at most `limit` looked at per state). */
  countsByName(limit = 1000) {
    return this.driver.countsByName(limit)
  }

  /** Which driver holds the jobs: `memory` (this process) or `bullmq` (Redis). */
  get driverKind() {
    return this.driver.kind
  }

  /** Graceful stop: no new jobs, running ones get QUEUE_SHUTDOWN_TIMEOUT to finish. */
  shutdown(timeoutMs = this.defaults.shutdownTimeoutMs) {
    return this.driver.close(timeoutMs)
  }

  private async run(job: RunContext) {
    const handler = await this.handler(job.name)
    return handler(job.payload, { id: job.id, attempt: job.attempt, name: job.name })
  }

  private handler(name: string): Promise<JobHandler> {
    let loading = this.handlers.get(name)
    if (!loading) {
      loading = this.source().then(async (known) => {
        const claim = known.get(name)
        // A job queued by a newer or differently configured instance: retrying cannot help here.
        if (!claim) throw new PermanentJobError(`No enabled plugin handles the job "${name}"`)
        const { default: handler } = await claim.load()
        if (typeof handler !== 'function') {
          throw new PermanentJobError(
            `The job "${name}" of plugin "${claim.pluginId}" does not export a handler function`
          )
        }
        return handler
      })
      // Only a successful load is cached: a failed import may work on the next attempt.
      loading.catch(() => this.handlers.delete(name))
      this.handlers.set(name, loading)
    }
    return loading.catch((error) => {
      this.logger.error({ err: error, name }, 'job handler could not be loaded')
      throw error
    })
  }
}
