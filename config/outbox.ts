import env from '#start/env'

/**
 * The kernel outbox (docs/outbox.md): retries, claims, the sweeper that
 * re-sends what a crash or a lost job left behind, and retention of the log.
 */
const outboxConfig = {
  /** Attempts per delivery, first included (with the backoff below: about 21 hours). */
  maxAttempts: env.get('OUTBOX_MAX_ATTEMPTS', 11),
  backoff: {
    baseMs: env.get('OUTBOX_BACKOFF_MS', 10_000),
    factor: 3,
    maxMs: env.get('OUTBOX_BACKOFF_MAX_MS', 6 * 3600_000),
    jitter: 0.2,
  },
  /** How long a worker's claim on a delivery lasts: a killed worker's delivery is sent again after it. */
  leaseMs: env.get('OUTBOX_LEASE_MS', 60_000),
  /** How often each serving process looks for deliveries whose job was lost. */
  sweepMs: env.get('OUTBOX_SWEEP_MS', 10_000),
  /** A delivery due this long ago with no worker on it is considered lost (its job is dispatched again). */
  sweepGraceMs: env.get('OUTBOX_SWEEP_GRACE_MS', 30_000),
  /** Finished deliveries and their attempts are deleted after this many days. */
  retentionDays: env.get('OUTBOX_RETENTION_DAYS', 30),
  /**
   * Sends in flight at once in one process (web or queue:work), and per recipient (a webhook
   * subscription, a device): the job does not wait for the answer, so a slow receiver holds
   * only its own share, never the queue's workers.
   */
  sends: env.get('OUTBOX_SENDS', 128),
  sendsPerRecipient: env.get('OUTBOX_SENDS_PER_RECIPIENT', 16),
  /**
   * With the in-process queue (no Redis), who sends: `inline`, the web process itself (the
   * default: a delivery leaves within milliseconds), or `process`, a sending process the web
   * process forks at a lower CPU priority (`node ace outbox:send`: sends never take the web
   * process's CPU, so writes go faster under load, and deliveries wait for idle CPU).
   * With Redis, `queue:work` processes and QUEUE_INLINE_WORKER decide instead.
   */
  sender: env.get('OUTBOX_SENDER', 'inline'),
  /** The sending process's niceness: 0 is the web process's priority, 19 only idle CPU. */
  senderNice: env.get('OUTBOX_SENDER_NICE', 10),
  /**
   * Writes first (docs/outbox.md), off by default: with a delay (ms), while writes keep a
   * process's event loop, or every core of the machine, at least 90 % busy, a delivery waits
   * until it has been due that long, so a burst of writes is not slowed by the deliveries it
   * causes. The default (0) sends at once: deliveries then keep pace with saturating writes
   * (p99 in milliseconds) at the writes' expense.
   */
  writesFirst:
    env.get('OUTBOX_SATURATED_DELAY_MS', 0) > 0
      ? { maxDelayMs: env.get('OUTBOX_SATURATED_DELAY_MS', 0), threshold: 0.9 }
      : null,
}

export default outboxConfig
