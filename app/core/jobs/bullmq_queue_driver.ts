import { Job, Queue, UnrecoverableError, Worker, type ConnectionOptions } from 'bullmq'
import type { Logger } from '@adonisjs/core/logger'
import {
  PermanentJobError,
  type DeadJob,
  type DispatchResult,
  type JobRunner,
  type JobSpec,
  type JobState,
  type JobStatus,
  type QueueDriver,
  tallyByName,
} from './types.js'

export interface BullMqDriverOptions {
  connection: ConnectionOptions
  /** Key prefix in Redis (BullMQ's own: it refuses an ioredis keyPrefix). */
  prefix: string
  queueName: string
  idempotencyTtlMs: number
  /** See QUEUE_LOCK_MS: how soon a job held by a dead worker is run again. */
  lockMs: number
  logger: Logger
}

const STATES: Record<string, JobState> = {
  'waiting': 'waiting',
  'wait': 'waiting',
  'prioritized': 'waiting',
  'waiting-children': 'waiting',
  'delayed': 'delayed',
  'active': 'active',
  'completed': 'completed',
  'failed': 'dead',
}

/**
 * Jobs in Redis through BullMQ: durable, shared by every Quire instance and
 * every `node ace queue:work` process. BullMQ's failed set is the dead-letter
 * list; its deduplication keys (with a TTL) are the idempotency keys; a job
 * whose worker died is taken back once its lock expires and runs again.
 */
export class BullMqQueueDriver implements QueueDriver {
  readonly kind = 'bullmq' as const
  private queue: Queue
  private worker: Worker | null = null
  private closed: Promise<void> | null = null

  constructor(private options: BullMqDriverOptions) {
    this.queue = new Queue(options.queueName, {
      connection: options.connection,
      prefix: options.prefix,
    })
    this.queue.on('error', (error) =>
      options.logger.error({ err: error }, 'job queue: Redis error')
    )
  }

  get working() {
    return this.worker !== null && this.closed === null
  }

  async add(spec: JobSpec): Promise<DispatchResult> {
    if (this.closed) throw new Error('The job queue is shut down: no job can be dispatched')
    const job = await this.queue.add(spec.name, spec.payload ?? null, {
      jobId: spec.id,
      delay: spec.delay || undefined,
      attempts: spec.attempts,
      backoff: { type: 'exponential', delay: spec.backoff },
      deduplication:
        spec.idempotencyKey === undefined
          ? undefined
          : { id: spec.idempotencyKey, ttl: this.options.idempotencyTtlMs },
      // Completed jobs are kept as long as their key is remembered: removing a
      // job also frees its deduplication key, which would reopen the window.
      removeOnComplete: { age: Math.ceil(this.options.idempotencyTtlMs / 1000) },
      removeOnFail: false,
    })
    // On a known key BullMQ adds nothing and answers the first job's id.
    return { id: job.id!, duplicate: job.id !== spec.id }
  }

  async startWorker(runner: JobRunner, concurrency: number) {
    if (this.closed) throw new Error('The job queue is shut down')
    if (this.worker) return
    const { logger } = this.options
    this.worker = new Worker(
      this.options.queueName,
      async (job: Job) => {
        try {
          return await runner({
            id: job.id!,
            name: job.name,
            payload: job.data,
            attempt: job.attemptsStarted,
          })
        } catch (error) {
          if (error instanceof PermanentJobError) throw new UnrecoverableError(error.message)
          throw error
        }
      },
      {
        connection: this.options.connection,
        prefix: this.options.prefix,
        concurrency: Math.max(1, concurrency),
        lockDuration: this.options.lockMs,
        stalledInterval: this.options.lockMs,
        // A crash mid-job is forgiven once more than BullMQ's default: a deploy
        // that kills workers twice during one long job should not bury it.
        maxStalledCount: 2,
      }
    )
    this.worker.on('error', (error) => logger.error({ err: error }, 'job worker: Redis error'))
    this.worker.on('stalled', (id) =>
      logger.warn({ job: id }, 'job worker: a job lost its worker; it will run again')
    )
    this.worker.on('failed', (job, error) => {
      if (!job) return
      const final =
        error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1)
      if (final) {
        logger.error(
          { job: job.id, name: job.name, attempts: job.attemptsMade, err: error.message },
          'job moved to the dead-letter list'
        )
      } else {
        logger.warn(
          { job: job.id, name: job.name, attempt: job.attemptsMade, err: error.message },
          'job failed; will retry'
        )
      }
    })
    await this.worker.waitUntilReady()
  }

  async status(id: string): Promise<JobStatus | null> {
    // State first: read after the job's fields, a job finishing in between would
    // look completed without its result.
    const raw = await this.queue.getJobState(id)
    const job = await Job.fromId(this.queue, id)
    if (!job) return null
    const state = STATES[raw] ?? 'unknown'
    // BullMQ counts the successful run in attemptsMade too.
    const completed = state === 'completed'
    return {
      id,
      name: job.name,
      state,
      attemptsStarted: job.attemptsStarted,
      attemptsFailed: completed ? Math.max(0, job.attemptsMade - 1) : job.attemptsMade,
      result: completed ? job.returnvalue : undefined,
      error: completed ? undefined : job.failedReason || undefined,
    }
  }

  async deadLetters(limit: number): Promise<DeadJob[]> {
    const jobs = await this.queue.getFailed(0, Math.max(0, limit - 1))
    return jobs
      .filter((job): job is Job => Boolean(job))
      .map((job) => ({
        id: job.id!,
        name: job.name,
        payload: job.data,
        attemptsFailed: job.attemptsMade,
        error: job.failedReason ?? '',
        failedAt: new Date(job.finishedOn ?? job.timestamp),
      }))
  }

  async retryDead(id: string) {
    const job = await Job.fromId(this.queue, id)
    if (!job || (await job.getState()) !== 'failed') return false
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })
    return true
  }

  async purgeDead() {
    const removed = await this.queue.clean(0, 0, 'failed')
    return removed.length
  }

  async countsByName(limit: number) {
    const states = [
      ['waiting', 'waiting'],
      ['prioritized', 'waiting'],
      ['delayed', 'delayed'],
      ['active', 'active'],
      ['failed', 'dead'],
    ] as const
    const taken: { name: string; state: 'waiting' | 'delayed' | 'active' | 'dead' }[] = []
    let sampled = false
    for (const [bullState, state] of states) {
      const jobs = await this.queue.getJobs([bullState], 0, limit)
      if (jobs.length > limit) sampled = true
      for (const job of jobs.slice(0, limit)) if (job) taken.push({ name: job.name, state })
    }
    return { byName: tallyByName(taken), sampled }
  }

  async counts() {
    const raw = await this.queue.getJobCounts(
      'waiting',
      'prioritized',
      'delayed',
      'active',
      'completed',
      'failed'
    )
    return {
      waiting: (raw.waiting ?? 0) + (raw.prioritized ?? 0),
      delayed: raw.delayed ?? 0,
      active: raw.active ?? 0,
      completed: raw.completed ?? 0,
      dead: raw.failed ?? 0,
    }
  }

  close(timeoutMs: number) {
    this.closed ??= this.shutdown(timeoutMs)
    return this.closed
  }

  /**
   * Waits for running jobs up to the grace period. A job still running after
   * it keeps its lock until the lock expires, then runs again elsewhere: late,
   * but never lost.
   */
  private async shutdown(timeoutMs: number) {
    if (this.worker) {
      const worker = this.worker
      let timer: NodeJS.Timeout | undefined
      const gracefully = worker.close().then(() => true)
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs)
      })
      const finished = await Promise.race([gracefully, timedOut])
      clearTimeout(timer)
      if (!finished) {
        this.options.logger.warn(
          'job worker: jobs still running after the shutdown grace period; they will run again'
        )
        await worker.close(true)
      }
    }
    await this.queue.close()
  }
}
