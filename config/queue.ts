import env from '#start/env'

/**
 * The job queue. With REDIS_HOST set, jobs live in Redis (BullMQ) and survive
 * restarts and crashed workers; otherwise they run in-process and a job still
 * waiting when the process exits is lost (see docs/queue.md).
 */
const queueConfig = {
  /** BullMQ on Redis when Redis is configured, the in-process queue otherwise. */
  driver: env.get('REDIS_HOST') ? ('bullmq' as const) : ('memory' as const),

  /** Attempts per job (first run included) unless the dispatch says otherwise. */
  attempts: env.get('QUEUE_ATTEMPTS', 5),
  /** First retry delay; each further retry doubles it. */
  backoffMs: env.get('QUEUE_BACKOFF_MS', 1000),
  /** Jobs one worker (the web process's inline worker or one `queue:work`) runs at once. */
  concurrency: env.get('QUEUE_CONCURRENCY', 5),
  /**
   * Whether the web process runs jobs itself. Only meaningful on Redis: the
   * in-process queue always runs its jobs where they were dispatched.
   */
  inlineWorker: env.get('QUEUE_INLINE_WORKER', true),
  /**
   * How long a worker's hold on a running job lasts without being renewed: a
   * worker that dies mid-job frees it after at most this long (then another
   * worker runs it again).
   */
  lockMs: env.get('QUEUE_LOCK_MS', 30_000),
  /** An idempotency key is remembered this long after its first dispatch. */
  idempotencyTtlMs: env.get('QUEUE_IDEMPOTENCY_TTL', 86_400) * 1000,
  /** On shutdown, running jobs get this long to finish before the process exits anyway. */
  shutdownTimeoutMs: env.get('QUEUE_SHUTDOWN_TIMEOUT', 10_000),
  /** Dead jobs kept by the in-process queue (Redis keeps them all until purged). */
  memoryDeadLetterLimit: 1000,

  /** BullMQ's own connection: it refuses ioredis key prefixes, so REDIS_PREFIX becomes its `prefix`. */
  redis: {
    connection: {
      host: env.get('REDIS_HOST', '127.0.0.1'),
      port: env.get('REDIS_PORT', 6379),
      password: env.get('REDIS_PASSWORD') || undefined,
      db: env.get('REDIS_DB', 0),
    },
    prefix: `${env.get('REDIS_PREFIX', 'quire:')}bull`,
    queueName: 'jobs',
  },
}

export type QueueConfig = typeof queueConfig

export default queueConfig
