/** The outcome of one job of a committed batch. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown }

export interface GroupCommitOptions<J, R> {
  /** Most jobs one batch takes. */
  batchSize: number
  /**
   * Batches that may run at once (default 1). More than one only helps where
   * the database commits on several connections in parallel (MariaDB).
   */
  concurrency?: number
  /**
   * A job's key: a job whose key is in a running batch waits for the next
   * batch, and so do later jobs of that key (writes of one row stay in order
   * and batches never wait for each other's row locks).
   */
  keyOf?: (job: J) => unknown
  /**
   * Writes a batch in one transaction (or statement) and answers each job's
   * outcome, in batch order. Throwing fails the whole batch (see retryAlone).
   */
  commit: (batch: J[]) => Promise<Settled<R>[]>
  /**
   * Whether a batch that threw is retried job by job, so that one bad job
   * fails alone (default: always). A job alone that throws is rejected.
   */
  retryAlone?: (error: unknown) => boolean
  /**
   * A batch taken while none runs starts on the next turn of the event loop (setImmediate)
   * instead of at once, so that the jobs of every request read in the same turn go together.
   * Where a commit never waits for I/O (better-sqlite3), no request is read while a batch is
   * written and, without this, every batch would be one job.
   */
  gather?: boolean
}

interface Pending<J, R> {
  job: J
  resolve(value: R): void
  reject(error: unknown): void
}

/**
 * Group commit: jobs that arrive while a batch is being written go together
 * in the next one, so a burst costs one stamp, one transaction and one commit
 * (one log flush on MariaDB) per batch, while each job keeps its own checks,
 * answer and events. A job alone waits for nothing.
 */
export class GroupCommit<J, R> {
  private queue: Pending<J, R>[] = []
  private running = 0
  private keysInFlight = new Set<unknown>()
  /** A drain is scheduled for the next turn (gather). */
  private gathering = false

  constructor(private options: GroupCommitOptions<J, R>) {}

  /** Jobs queued and not yet taken by a batch (a commit seeing some knows another batch follows). */
  get waiting() {
    return this.queue.length
  }

  /** Queues a job; resolves with its outcome once its batch has committed. */
  submit(job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ job, resolve, reject })
      if (this.running >= (this.options.concurrency ?? 1) || this.gathering) return
      if (!this.options.gather) return void this.drain()
      this.gathering = true
      setImmediate(() => {
        this.gathering = false
        void this.drain()
      })
    })
  }

  private take(): Pending<J, R>[] {
    const { batchSize, keyOf } = this.options
    if (!keyOf) return this.queue.splice(0, batchSize)
    const batch: Pending<J, R>[] = []
    const rest: Pending<J, R>[] = []
    const waiting = new Set<unknown>()
    for (const pending of this.queue) {
      const key = keyOf(pending.job)
      // A full batch, or a key busy in another batch: the job waits, and so do its key's later
      // jobs. Jobs of one key may share a batch: the commit applies them in order.
      if (batch.length >= batchSize || this.keysInFlight.has(key) || waiting.has(key)) {
        rest.push(pending)
        waiting.add(key)
      } else {
        batch.push(pending)
      }
    }
    for (const pending of batch) this.keysInFlight.add(keyOf(pending.job))
    this.queue = rest
    return batch
  }

  private async drain() {
    this.running++
    try {
      for (let batch = this.take(); batch.length; batch = this.take()) {
        try {
          await this.commit(batch)
        } finally {
          const { keyOf } = this.options
          if (keyOf) for (const pending of batch) this.keysInFlight.delete(keyOf(pending.job))
        }
      }
    } finally {
      this.running--
    }
  }

  private async commit(batch: Pending<J, R>[]) {
    let outcomes: Settled<R>[]
    try {
      outcomes = await this.options.commit(batch.map((pending) => pending.job))
    } catch (error) {
      if (batch.length > 1 && (this.options.retryAlone?.(error) ?? true)) {
        for (const pending of batch) await this.commit([pending])
        return
      }
      for (const pending of batch) pending.reject(error)
      return
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index]
      if (!outcome)
        pending.reject(new Error('GroupCommit: the commit answered no outcome for this job'))
      else if (outcome.ok) pending.resolve(outcome.value)
      else pending.reject(outcome.error)
    })
  }
}
