import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { Logger } from '@adonisjs/core/logger'
import type { QueueService } from '#core/services/queue_service'
import { writeQuery } from '#core/native_sql'
import type { BackoffPolicy } from './backoff.js'
import { SendSlots } from './send_slots.js'
import { WritesFirst, type WritesFirstSettings } from './writes_first.js'
import { OutboxPump, type DeliveryRow, type RemoteSender } from './outbox_pump.js'
import type {
  DeliveryState,
  OutboxChannel,
  OutboxContributor,
  OutboxEntry,
  OutboxTopic,
  OutboxTopics,
} from './types.js'

export interface OutboxSettings {
  maxAttempts: number
  backoff: BackoffPolicy
  leaseMs: number
  sweepMs: number
  sweepGraceMs: number
  retentionDays: number
  /** Sends in flight in one process, in all and per recipient (SendSlots). */
  sends: number
  sendsPerRecipient: number
  /** How long deliveries may wait while writes saturate the process (null: never held back). */
  writesFirst: WritesFirstSettings | null
}

/** The kernel's job that sends one delivery (app/core/operations/manifest.ts). */
export const OUTBOX_JOB = 'core.outbox'

const DELIVERIES = 'outbox_deliveries'
const ATTEMPTS = 'outbox_attempts'
const INSERT_CHUNK = 200
const PRUNE_EVERY_MS = 3600_000
/** Node's timers (the in-process queue's delays) hold at most about 24.8 days. */
const MAX_DELAY_MS = 2 ** 31 - 1
/**
 * Kicks through the queue are one job per window of this length (its
 * idempotency key), so a burst of writes makes one job, not one each; the
 * woken process keeps looking until the window (and a margin for clocks) has passed.
 */
const KICK_WINDOW_MS = 50
const KICK_MARGIN_MS = 100

export type { DeliveryRow } from './outbox_pump.js'

/**
 * What the `core.outbox` job receives: a kick (send what is due, and keep
 * looking until `openUntil`, this long after the kick was asked for; with
 * `reclaim`, also take back lapsed claims). Jobs of the earlier one-job-per-
 * delivery form (`{id}`, `{channel, key}`) still queued after an upgrade are kicks too.
 */
export type OutboxJobPayload =
  { kick: number; reclaim?: boolean } | { id: number } | { channel: string; key: string }

/**
 * One outbox for every delivery to the outside (docs/outbox.md).
 *
 * Writing: a writer calls `stage(trx, topic, event, afterCommit)` inside its
 * transaction; the plugins that contributed to the topic answer entries,
 * which are inserted there (so a crash after commit loses nothing), and a
 * sending process is kicked after commit. Sending: the process's OutboxPump
 * claims due rows in batches (one process wins each), hands them to their
 * channel's adapter, logs the attempts, and schedules retries with backoff
 * and jitter, or finishes them. A sweeper kicks again when rows wait longer
 * than they should (a kick lost with the in-process queue at a crash, a
 * worker killed mid-send: its claim lapses).
 */
export class OutboxService {
  private channels = new Map<string, OutboxChannel>()
  private contributors = new Map<string, OutboxContributor<any>[]>()
  private sweeper: NodeJS.Timeout | null = null
  private lastPrune = 0
  /** Local wake-ups scheduled (in-process queue), one timer per kick window. */
  private timers = new Map<number, NodeJS.Timeout>()
  /** The queue is the in-process one (known after the first kick): kicks due now wake the pump at once. */
  private inProcessQueue = false
  /** The web process with OUTBOX_SENDER=process: where its sends run. */
  private remoteSender: RemoteSender | null = null
  /** The sending process: kicks are its web process's to answer (that process claims). */
  private kickForwarder: ((at: number, reclaim: boolean) => void) | null = null
  readonly slots: SendSlots
  readonly pump: OutboxPump

  constructor(
    private db: Database,
    private queue: () => Promise<QueueService>,
    private logger: Logger,
    readonly settings: OutboxSettings
  ) {
    this.slots = new SendSlots({ total: settings.sends, perRecipient: settings.sendsPerRecipient })
    this.pump = new OutboxPump({
      channels: this.channels,
      slots: this.slots,
      settings,
      logger,
      kickAt: (at) => this.kick(at),
      remote: () => this.remoteSender,
      writesFirst: settings.writesFirst ? new WritesFirst(settings.writesFirst) : null,
    })
  }

  /**
   * The web process with OUTBOX_SENDER=process (detached_sender.ts): its pump
   * goes on claiming and logging, and hands the sends themselves to the
   * sending process; null sends here again.
   */
  sendThrough(remote: RemoteSender | null) {
    this.remoteSender = remote
  }

  /** The sending process: its kicks (a reminder's fan-out staged deliveries) go to the web process. */
  forwardKicks(forward: (at: number, reclaim: boolean) => void) {
    this.kickForwarder = forward
  }

  /** A registered channel adapter (the sending process runs the sends it is handed). */
  channel(name: string): OutboxChannel | undefined {
    return this.channels.get(name)
  }

  /** A plugin's channel adapter (its provider's boot). */
  registerChannel(name: string, channel: OutboxChannel) {
    if (this.channels.has(name)) throw new Error(`Outbox channel "${name}" registered twice`)
    this.channels.set(name, channel)
  }

  /** A plugin's part in an in-transaction topic (its provider's boot). */
  contribute<T extends OutboxTopic>(topic: T, contributor: OutboxContributor<OutboxTopics[T]>) {
    const list = this.contributors.get(topic) ?? []
    list.push(contributor)
    this.contributors.set(topic, list)
  }

  /** Whether any contributor wants this event (synchronous, cheap). */
  wants<T extends OutboxTopic>(topic: T, event: Partial<OutboxTopics[T]>): boolean {
    const list = this.contributors.get(topic)
    return !!list && list.some((contributor) => contributor.wants(event))
  }

  /**
   * Before the writer's transaction: whether staging this event may write anything (each
   * contributor that wants it, asked with its `mayStage` where it has one). False: the writer
   * may skip stage() and its transaction.
   */
  async mayStage<T extends OutboxTopic>(
    topic: T,
    event: Partial<OutboxTopics[T]>
  ): Promise<boolean> {
    const list = (this.contributors.get(topic) ?? []).filter((contributor) =>
      contributor.wants(event)
    )
    const answers = await Promise.all(
      list.map((contributor) => contributor.mayStage?.(event) ?? true)
    )
    return answers.some(Boolean)
  }

  /**
   * Inside the writer's transaction: asks the topic's contributors for their
   * deliveries and writes them there. A contributor that throws fails the
   * write (it ran in its transaction); contributors only read.
   */
  async stage<T extends OutboxTopic>(
    client: QueryClientContract,
    topic: T,
    event: OutboxTopics[T],
    afterCommit: (callback: () => unknown) => void
  ): Promise<number> {
    const list = this.contributors.get(topic)
    if (!list) return 0
    const entries: OutboxEntry[] = []
    for (const contributor of list)
      if (contributor.wants(event))
        entries.push(...(await contributor.entries(event, client, afterCommit)))
    return this.enqueue(client, entries, afterCommit)
  }

  /** Writes deliveries with the caller's client (its transaction); their jobs go after commit. */
  async enqueue(
    client: QueryClientContract,
    entries: OutboxEntry[],
    afterCommit: (callback: () => unknown) => void
  ): Promise<number> {
    if (entries.length === 0) return 0
    const now = Date.now()
    const mysql = client.dialect.name === 'mysql'
    for (let start = 0; start < entries.length; start += INSERT_CHUNK) {
      const slice = entries.slice(start, start + INSERT_CHUNK)
      const bindings: unknown[] = []
      for (const entry of slice)
        bindings.push(
          entry.channel,
          entry.recipient,
          entry.idempotencyKey,
          entry.orderKey ?? null,
          entry.eventType,
          JSON.stringify(entry.payload),
          entry.maxAttempts ?? this.settings.maxAttempts,
          dueAt(entry, now),
          now,
          now
        )
      await writeQuery(client, insertSql(mysql, slice.length), bindings)
    }
    // One kick for the write, whatever its number of deliveries, and not awaited: the write
    // answers without waiting for the queue (a Redis round trip with BullMQ). A kick lost here (a
    // crash, Redis away) leaves the rows pending, and the sweeper kicks again.
    afterCommit(() => {
      const committed = Date.now()
      const dues = new Set(entries.map((entry) => dueAt(entry, committed)))
      for (const due of dues) this.kick(due)
    })
    return entries.length
  }

  /**
   * Makes a sending process look for due deliveries at `at` (now by
   * default): with the in-process queue, this process's pump (a timer for
   * later); otherwise a `core.outbox` job for whichever worker takes it, one
   * per time window however many ask.
   */
  kick(at = Date.now(), reclaim = false) {
    if (this.kickForwarder) return this.kickForwarder(at, reclaim)
    // The in-process queue, due now (every write's kick): this process's pump, without a promise.
    if (this.inProcessQueue && at <= Date.now()) return this.pump.wake(0, reclaim)
    this.kickAsync(at, reclaim).catch((error) =>
      this.logger.warn({ err: error }, 'outbox: kick failed; the sweeper will kick again')
    )
  }

  private async kickAsync(at: number, reclaim: boolean) {
    const queue = await this.queue()
    const now = Date.now()
    const window = Math.ceil(Math.max(at, now) / KICK_WINDOW_MS) * KICK_WINDOW_MS
    if (queue.driverKind === 'memory') {
      this.inProcessQueue = true
      if (at <= now) return this.pump.wake(0, reclaim)
      if (this.timers.has(window)) return
      const handle = setTimeout(
        () => {
          this.timers.delete(window)
          // A timer may fire a little early: the pump keeps looking until the window has begun.
          this.pump.wake(window)
        },
        Math.min(window - now, MAX_DELAY_MS)
      )
      handle.unref()
      this.timers.set(window, handle)
      return
    }
    await queue.dispatch(
      OUTBOX_JOB,
      { kick: window + KICK_MARGIN_MS, reclaim } satisfies OutboxJobPayload,
      {
        attempts: 1,
        delay: Math.min(Math.max(0, window - now), MAX_DELAY_MS),
        idempotencyKey: `outbox:kick:${window}${reclaim ? ':reclaim' : ''}`,
      }
    )
  }

  /** The `core.outbox` job: this process's pump looks for due deliveries (and does not wait for them). */
  run(payload: OutboxJobPayload) {
    if ('kick' in payload) this.pump.wake(payload.kick, payload.reclaim === true)
    else this.pump.wake(Date.now() + KICK_MARGIN_MS)
  }

  /**
   * Cancels the waiting deliveries of a channel whose key starts with
   * `prefix`, with the caller's client (inside the transaction that makes
   * them obsolete: an event rescheduled or deleted cancels its reminders).
   */
  async cancelByKeyPrefix(client: QueryClientContract, channel: string, prefix: string) {
    const now = Date.now()
    return client
      .from(DELIVERIES)
      .where('channel', channel)
      .whereRaw(`idempotency_key LIKE ? ESCAPE '!'`, [`${escapeLike(prefix)}%`])
      .where('state', 'pending')
      .update({ state: 'cancelled', finished_at: now, updated_at: now })
  }

  /** Sends a finished (or waiting) delivery again now, with a fresh set of attempts. */
  async redeliver(id: number): Promise<boolean> {
    const row = await this.db.from(DELIVERIES).where('id', id).first()
    if (!row || row.state === 'sending') return false
    const now = Date.now()
    await this.db
      .from(DELIVERIES)
      .where('id', id)
      .update({
        state: 'pending',
        next_attempt_at: now,
        max_attempts: Number(row.attempts) + this.settings.maxAttempts,
        finished_at: null,
        updated_at: now,
      })
    this.kick(now)
    return true
  }

  /** Cancels a recipient's waiting deliveries (its subscription was deleted or disabled). */
  async cancelPending(channel: string, recipient: string) {
    const now = Date.now()
    return this.db
      .from(DELIVERIES)
      .where('channel', channel)
      .where('recipient', recipient)
      .where('state', 'pending')
      .update({ state: 'cancelled', finished_at: now, updated_at: now })
  }

  /** A recipient's deliveries, newest first. */
  async list(
    channel: string,
    recipient: string,
    options: { state?: DeliveryState; offset: number; limit: number }
  ) {
    const base = () => {
      const query = this.db.from(DELIVERIES).where('channel', channel).where('recipient', recipient)
      if (options.state) query.where('state', options.state)
      return query
    }
    const [rows, count] = await Promise.all([
      base().orderBy('id', 'desc').offset(options.offset).limit(options.limit),
      base().count('* as total').first(),
    ])
    return { rows: rows as DeliveryRow[], total: Number(count?.total ?? 0) }
  }

  async find(id: number): Promise<DeliveryRow | null> {
    return (await this.db.from(DELIVERIES).where('id', id).first()) ?? null
  }

  /** The attempts of some deliveries, oldest first. */
  async attemptsOf(ids: number[]) {
    if (ids.length === 0) return []
    return this.db.from(ATTEMPTS).whereIn('delivery_id', ids).orderBy('id')
  }

  /** Ids of a recipient's deliveries that failed (or were cancelled) since a time. */
  async failedSince(channel: string, recipient: string, since: number) {
    const rows = await this.db
      .from(DELIVERIES)
      .where('channel', channel)
      .where('recipient', recipient)
      .whereIn('state', ['failed', 'cancelled'])
      .where('created_at', '>=', since)
      .select('id')
      .orderBy('id')
    return rows.map((row) => Number(row.id))
  }

  /**
   * Kicks a sending process when deliveries wait longer than they should: due
   * for longer than the grace period and still pending with no earlier one of
   * their order key in the way (a kick lost: the in-process queue at a crash,
   * Redis flushed), or claimed by a process whose lease lapsed (killed
   * mid-send; the kick then takes those back). Several processes may sweep
   * at once: claims let one send each delivery. Answers whether it kicked.
   */
  async sweep(): Promise<boolean> {
    const now = Date.now()
    const late = await this.db
      .from(`${DELIVERIES} as d`)
      .where('d.state', 'pending')
      .where('d.next_attempt_at', '<=', now - this.settings.sweepGraceMs)
      .whereNotExists((earlier) =>
        earlier
          .from(`${DELIVERIES} as e`)
          .whereRaw('e.order_key = d.order_key')
          .whereRaw('e.id < d.id')
          .whereIn('e.state', ['pending', 'sending'])
      )
      .select('d.id')
      .first()
    const lapsed = await this.db
      .from(DELIVERIES)
      .where('state', 'sending')
      .where('lease_until', '<', now)
      .select('id')
      .first()
    if (late || lapsed) {
      this.logger.info({ late: !!late, lapsed: !!lapsed }, 'outbox: deliveries waiting; kicked')
      this.kick(now, !!lapsed)
    }
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now
      await this.prune()
    }
    return !!(late || lapsed)
  }

  /** Deletes finished deliveries (and their attempts) older than the retention. */
  async prune(now = Date.now()): Promise<number> {
    const before = now - this.settings.retentionDays * 86_400_000
    let total = 0
    for (;;) {
      const rows = await this.db
        .from(DELIVERIES)
        .whereNotNull('finished_at')
        .where('finished_at', '<', before)
        .select('id')
        .limit(500)
      if (rows.length === 0) return total
      const ids = rows.map((row) => Number(row.id))
      await this.db.transaction(async (trx) => {
        await trx.from(ATTEMPTS).whereIn('delivery_id', ids).delete()
        await trx.from(DELIVERIES).whereIn('id', ids).delete()
      })
      total += ids.length
    }
  }

  /**
   * Starts the periodic sweep (serving processes). The first one runs one
   * period after start (at boot the migrations may still be running in tests).
   */
  startSweeper() {
    if (this.sweeper) return
    const tick = () =>
      this.sweep().catch((error) => this.logger.error({ err: error }, 'outbox sweep failed'))
    this.sweeper = setInterval(tick, this.settings.sweepMs)
    this.sweeper.unref()
  }

  stopSweeper() {
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = null
    for (const handle of this.timers.values()) clearTimeout(handle)
    this.timers.clear()
  }
}

/** INSERT texts by dialect and row count (a write stages the same few shapes again and again). */
const insertTexts = new Map<string, string>()

/**
 * Inserts `count` deliveries, pending: a key already written (a writer staged the same change
 * twice) is skipped, not an error.
 */
function insertSql(mysql: boolean, count: number) {
  const key = `${mysql}:${count}`
  let sql = insertTexts.get(key)
  if (!sql) {
    const row = `(?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)`
    sql =
      `${mysql ? 'INSERT IGNORE' : 'INSERT OR IGNORE'} INTO ${DELIVERIES} (channel, recipient,` +
      ` idempotency_key, order_key, event_type, payload, state, attempts, max_attempts,` +
      ` next_attempt_at, created_at, updated_at) VALUES ${Array(count).fill(row).join(', ')}`
    insertTexts.set(key, sql)
  }
  return sql
}

/** When an entry may first be sent: now, or its notBefore when later. */
function dueAt(entry: OutboxEntry, now: number) {
  return entry.notBefore !== undefined && entry.notBefore > now ? Math.round(entry.notBefore) : now
}

/** `%`, `_` and the escape character `!` stand for themselves in a LIKE pattern (ESCAPE '!', both databases). */
function escapeLike(text: string) {
  return text.replace(/[!%_]/g, (char) => `!${char}`)
}
