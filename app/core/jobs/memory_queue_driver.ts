import type { Logger } from '@adonisjs/core/logger'
import {
  PermanentJobError,
  retryDelay,
  type DeadJob,
  type DispatchResult,
  type JobRunner,
  type JobSpec,
  type JobState,
  type JobStatus,
  type QueueDriver,
  tallyByName,
} from './types.js'

interface MemoryJob {
  spec: JobSpec
  state: Exclude<JobState, 'unknown'>
  attemptsStarted: number
  attemptsFailed: number
  result?: unknown
  error?: string
  failedAt?: Date
  timer?: NodeJS.Timeout
}

export interface MemoryDriverOptions {
  idempotencyTtlMs: number
  deadLetterLimit: number
  /** Completed jobs remembered for status(); older ones are forgotten first. */
  completedLimit?: number
  logger: Logger
}

/**
 * The embedded default: jobs live in this process, so the queue needs no
 * server. It keeps the same contract as the Redis driver (retries with
 * backoff, dead letters, idempotency keys, delays) except durability: a job
 * still waiting when the process exits is lost, and close() says how many.
 */
export class MemoryQueueDriver implements QueueDriver {
  readonly kind = 'memory' as const
  private jobs = new Map<string, MemoryJob>()
  /** Due jobs in dispatch order. */
  private ready: MemoryJob[] = []
  private running = new Map<string, Promise<void>>()
  private keys = new Map<string, { jobId: string; expiresAt: number }>()
  private completed: string[] = []
  private dead: string[] = []
  private runner: JobRunner | null = null
  private concurrency = 1
  private closing = false
  private closed: Promise<void> | null = null
  private addsSinceSweep = 0

  constructor(private options: MemoryDriverOptions) {}

  get working() {
    return this.runner !== null && !this.closing
  }

  async add(spec: JobSpec): Promise<DispatchResult> {
    if (this.closing) throw new Error('The job queue is shut down: no job can be dispatched')
    // Same wire behaviour as Redis: the handler sees a JSON copy, never the caller's object.
    const payload = spec.payload === undefined ? null : JSON.parse(JSON.stringify(spec.payload))
    const now = Date.now()
    if (spec.idempotencyKey !== undefined) {
      this.sweepKeys(now)
      const known = this.keys.get(spec.idempotencyKey)
      if (known && known.expiresAt > now) return { id: known.jobId, duplicate: true }
      this.keys.set(spec.idempotencyKey, {
        jobId: spec.id,
        expiresAt: now + this.options.idempotencyTtlMs,
      })
    }
    const job: MemoryJob = {
      spec: { ...spec, payload },
      state: 'waiting',
      attemptsStarted: 0,
      attemptsFailed: 0,
    }
    this.jobs.set(spec.id, job)
    if (spec.delay > 0) this.later(job, spec.delay)
    else this.enqueue(job)
    return { id: spec.id, duplicate: false }
  }

  async startWorker(runner: JobRunner, concurrency: number) {
    if (this.closing) throw new Error('The job queue is shut down')
    this.runner = runner
    this.concurrency = Math.max(1, concurrency)
    this.pump()
  }

  async status(id: string): Promise<JobStatus | null> {
    const job = this.jobs.get(id)
    if (!job) return null
    return {
      id,
      name: job.spec.name,
      state: job.state,
      attemptsStarted: job.attemptsStarted,
      attemptsFailed: job.attemptsFailed,
      result: job.result,
      error: job.error,
    }
  }

  async deadLetters(limit: number): Promise<DeadJob[]> {
    return this.dead
      .slice(-limit)
      .reverse()
      .map((id) => this.jobs.get(id)!)
      .map((job) => ({
        id: job.spec.id,
        name: job.spec.name,
        payload: job.spec.payload,
        attemptsFailed: job.attemptsFailed,
        error: job.error ?? '',
        failedAt: job.failedAt!,
      }))
  }

  async retryDead(id: string) {
    const job = this.jobs.get(id)
    if (!job || job.state !== 'dead' || this.closing) return false
    this.dead = this.dead.filter((deadId) => deadId !== id)
    job.attemptsStarted = 0
    job.attemptsFailed = 0
    job.error = undefined
    job.failedAt = undefined
    this.enqueue(job)
    return true
  }

  async purgeDead() {
    const count = this.dead.length
    for (const id of this.dead) this.jobs.delete(id)
    this.dead = []
    return count
  }

  async counts() {
    const counts = { waiting: 0, delayed: 0, active: 0, completed: 0, dead: 0 }
    for (const job of this.jobs.values()) counts[job.state]++
    return counts
  }

  async countsByName(limit: number) {
    const seen = { waiting: 0, delayed: 0, active: 0, dead: 0 }
    const taken: { name: string; state: keyof typeof seen }[] = []
    let sampled = false
    for (const job of this.jobs.values()) {
      if (job.state === 'completed') continue
      if (seen[job.state] >= limit) {
        sampled = true
        continue
      }
      seen[job.state]++
      taken.push({ name: job.spec.name, state: job.state })
    }
    return { byName: tallyByName(taken), sampled }
  }

  /**
   * Graceful stop. Nothing else will ever run these jobs, so jobs already due
   * still run (within the grace period) while delayed ones and retries are
   * dropped; whatever is left when the time is up is reported as lost.
   */
  close(timeoutMs: number) {
    this.closed ??= this.drain(timeoutMs)
    return this.closed
  }

  private async drain(timeoutMs: number) {
    this.closing = true
    let dropped = 0
    for (const job of this.jobs.values()) {
      if (job.state !== 'delayed') continue
      clearTimeout(job.timer)
      this.jobs.delete(job.spec.id)
      dropped++
    }
    const deadline = Date.now() + timeoutMs
    while (
      (this.running.size > 0 || (this.ready.length > 0 && this.runner)) &&
      Date.now() < deadline
    ) {
      this.pump()
      const timeout = new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, deadline - Date.now())).unref()
      )
      await Promise.race([Promise.race(this.running.values()), timeout])
    }
    const lost = dropped + this.ready.length + this.running.size
    if (lost > 0) {
      this.options.logger.warn(
        { delayed: dropped, waiting: this.ready.length, running: this.running.size },
        'in-process job queue stopped with %d unfinished job(s); they are lost (configure Redis for durable jobs)',
        lost
      )
    }
    this.ready = []
    this.runner = null
  }

  private enqueue(job: MemoryJob) {
    job.state = 'waiting'
    this.ready.push(job)
    this.pump()
  }

  private later(job: MemoryJob, delay: number) {
    job.state = 'delayed'
    // unref: a pending retry must not keep an ace command alive; close() reports it instead.
    job.timer = setTimeout(() => {
      job.timer = undefined
      this.enqueue(job)
    }, delay).unref()
  }

  private pump() {
    while (this.runner && this.running.size < this.concurrency && this.ready.length > 0) {
      const job = this.ready.shift()!
      this.running.set(job.spec.id, this.run(job, this.runner))
    }
  }

  private async run(job: MemoryJob, runner: JobRunner) {
    job.state = 'active'
    job.attemptsStarted++
    try {
      const { id, name, payload } = job.spec
      // A microtask boundary first, so a synchronous throw in a handler behaves like a rejection.
      job.result = await Promise.resolve().then(() =>
        runner({ id, name, payload, attempt: job.attemptsStarted })
      )
      job.state = 'completed'
      job.error = undefined
      this.remember(job.spec.id)
    } catch (error) {
      job.attemptsFailed++
      job.error = error instanceof Error ? error.message : String(error)
      const permanent = error instanceof PermanentJobError
      if (permanent || job.attemptsFailed >= job.spec.attempts) {
        this.bury(job)
      } else if (this.closing) {
        // Its retry would come after the process is gone: report it as lost rather than pretend.
        this.jobs.delete(job.spec.id)
        this.options.logger.warn(
          { job: job.spec.id, name: job.spec.name },
          'job failed during shutdown; its retry is lost'
        )
      } else {
        this.later(job, retryDelay(job.spec.backoff, job.attemptsFailed))
      }
    } finally {
      this.running.delete(job.spec.id)
      if (!this.closing || this.ready.length > 0) this.pump()
    }
  }

  private bury(job: MemoryJob) {
    job.state = 'dead'
    job.failedAt = new Date()
    this.dead.push(job.spec.id)
    this.options.logger.error(
      { job: job.spec.id, name: job.spec.name, attempts: job.attemptsFailed, err: job.error },
      'job moved to the dead-letter list'
    )
    while (this.dead.length > this.options.deadLetterLimit) this.jobs.delete(this.dead.shift()!)
  }

  private remember(id: string) {
    this.completed.push(id)
    const limit = this.options.completedLimit ?? 1000
    while (this.completed.length > limit) this.jobs.delete(this.completed.shift()!)
  }

  /** Forgets expired idempotency keys now and then, so unique keys cannot grow without bound. */
  private sweepKeys(now: number) {
    if (++this.addsSinceSweep < 1000) return
    this.addsSinceSweep = 0
    for (const [key, entry] of this.keys) if (entry.expiresAt <= now) this.keys.delete(key)
  }
}
