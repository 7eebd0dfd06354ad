/** What a plugin may say when it dispatches a job; every field is optional. */
export interface DispatchOptions {
  /**
   * The same key dispatched again while remembered (QUEUE_IDEMPOTENCY_TTL)
   * adds no second job: the answer names the first one. Use it for side
   * effects that must happen once, e.g. `webhook:<hookId>:<stamp>`.
   */
  idempotencyKey?: string
  /** Run no sooner than this many milliseconds from now. */
  delay?: number
  /** Attempts in all (first run included); defaults to QUEUE_ATTEMPTS. */
  attempts?: number
  /** First retry delay in ms, doubled on each further retry; defaults to QUEUE_BACKOFF_MS. */
  backoff?: number
}

/** Dispatch options after defaults were applied: what a driver receives. */
export interface JobSpec {
  id: string
  name: string
  payload: unknown
  attempts: number
  backoff: number
  delay: number
  idempotencyKey?: string
}

export interface DispatchResult {
  /** The job's id: stable across retries, so a handler can use it to deduplicate its own effects. */
  id: string
  /** True when the idempotency key was already known and no job was added. */
  duplicate: boolean
}

export type JobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'dead' | 'unknown'

export interface JobStatus {
  id: string
  name: string
  state: JobState
  /** Runs started so far, including one cut short by a crashed worker. */
  attemptsStarted: number
  /** Runs that failed so far. */
  attemptsFailed: number
  /** The handler's return value once completed. */
  result?: unknown
  /** The last failure's message. */
  error?: string
}

/** A job name's jobs per state (completed jobs are not counted). */
export interface JobNameCounts {
  name: string
  waiting: number
  delayed: number
  active: number
  dead: number
}

/** A job that failed every attempt (or failed permanently), kept until retried or purged. */
export interface DeadJob {
  id: string
  name: string
  payload: unknown
  attemptsFailed: number
  error: string
  failedAt: Date
}

/** What a worker hands the queue service for each run. */
export interface RunContext {
  id: string
  name: string
  payload: unknown
  /** 1 on the first run, then 2, 3… (a run cut short by a crashed worker counts). */
  attempt: number
}

export type JobRunner = (job: RunContext) => Promise<unknown>

/**
 * One storage and execution strategy for jobs. QueueService holds the policy
 * (names, defaults, handlers); a driver only stores, schedules and runs.
 */
export interface QueueDriver {
  readonly kind: 'memory' | 'bullmq'
  add(job: JobSpec): Promise<DispatchResult>
  /** Starts taking jobs and running them through `runner`, `concurrency` at a time. */
  startWorker(runner: JobRunner, concurrency: number): Promise<void>
  readonly working: boolean
  status(id: string): Promise<JobStatus | null>
  deadLetters(limit: number): Promise<DeadJob[]>
  /** Puts a dead job back in line with its attempts reset; false if no such dead job. */
  retryDead(id: string): Promise<boolean>
  /** Forgets every dead job; answers how many. */
  purgeDead(): Promise<number>
  /** Counts per state, for operators. */
  counts(): Promise<Record<'waiting' | 'delayed' | 'active' | 'completed' | 'dead', number>>
  /**
   * Jobs not completed (waiting, delayed, active, dead) per job name and state,
   * for operators; looks at most `limit` jobs of each state (`sampled` true
   * when a state held more).
   */
  countsByName(limit: number): Promise<{ byName: JobNameCounts[]; sampled: boolean }>
  /**
   * Stops taking jobs and lets running ones finish, waiting at most
   * `timeoutMs`; then releases connections. Idempotent.
   */
  close(timeoutMs: number): Promise<void>
}

/**
 * Thrown by a handler (or by the queue for an unknown job name) when trying
 * again cannot help, e.g. the payload refers to something deleted: the job
 * goes straight to the dead-letter list.
 */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PermanentJobError'
  }
}

/** Retry n (1-based) waits backoff × 2^(n-1): BullMQ's "exponential" formula, shared by both drivers. */
export function retryDelay(backoff: number, failedAttempts: number) {
  return Math.round(backoff * 2 ** (failedAttempts - 1))
}

/** Tallies jobs by name (shared by the drivers). */
export function tallyByName(
  jobs: Iterable<{ name: string; state: 'waiting' | 'delayed' | 'active' | 'dead' }>
): JobNameCounts[] {
  const byName = new Map<string, JobNameCounts>()
  for (const job of jobs) {
    const counts = byName.get(job.name) ?? {
      name: job.name,
      waiting: 0,
      delayed: 0,
      active: 0,
      dead: 0,
    }
    counts[job.state]++
    byName.set(job.name, counts)
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
}
