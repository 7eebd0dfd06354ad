import { createHash } from 'node:crypto'
import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { Logger } from '@adonisjs/core/logger'
import type { QueueService } from '#core/services/queue_service'
import { writeQuery } from '#core/native_sql'
import { retryDelay, type BackoffPolicy } from './backoff.js'
import { SendSlots } from './send_slots.js'
import type {
  AttemptResult,
  DeliveryState,
  OutboxChannel,
  OutboxContributor,
  OutboxDelivery,
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
}

/** The kernel's job that sends one delivery (app/core/operations/manifest.ts). */
export const OUTBOX_JOB = 'core.outbox'

const DELIVERIES = 'outbox_deliveries'
const ATTEMPTS = 'outbox_attempts'
const INSERT_CHUNK = 200
const SWEEP_LIMIT = 1000
const PRUNE_EVERY_MS = 3600_000
/** Node's timers (the in-process queue's delays) hold at most about 24.8 days. */
const MAX_DELAY_MS = 2 ** 31 - 1

/** A delivery row as stored. */
export interface DeliveryRow {
  id: number
  channel: string
  recipient: string
  idempotency_key: string
  order_key: string | null
  event_type: string
  payload: string
  state: DeliveryState
  attempts: number
  max_attempts: number
  next_attempt_at: number
  lease_until: number | null
  last_status: number | null
  last_error: string | null
  last_duration_ms: number | null
  created_at: number
  updated_at: number
  finished_at: number | null
}

/** What the delivery job receives: a delivery by id, or (first dispatch) by channel and key. */
export type OutboxJobPayload = { id: number } | { channel: string; key: string }

/**
 * One outbox for every delivery to the outside (docs/outbox.md).
 *
 * Writing: a writer calls `stage(trx, topic, event, afterCommit)` inside its
 * transaction; the plugins that contributed to the topic answer entries,
 * which are inserted there (so a crash after commit loses nothing), and their
 * jobs are dispatched after commit. Sending: the `core.outbox` job claims the
 * row (one worker wins), hands it to the channel's adapter, logs the attempt,
 * and schedules a retry with backoff and jitter, or finishes it. A sweeper
 * re-dispatches rows whose job was lost (in-process queue at a crash, a
 * worker killed mid-send: its claim lapses).
 */
export class OutboxService {
  private channels = new Map<string, OutboxChannel>()
  private contributors = new Map<string, OutboxContributor<any>[]>()
  private sweeper: NodeJS.Timeout | null = null
  private lastPrune = 0
  readonly slots: SendSlots

  constructor(
    private db: Database,
    private queue: () => Promise<QueueService>,
    private logger: Logger,
    readonly settings: OutboxSettings
  ) {
    this.slots = new SendSlots({ total: settings.sends, perRecipient: settings.sendsPerRecipient })
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
    const rows = entries.map((entry) => ({
      channel: entry.channel,
      recipient: entry.recipient,
      idempotency_key: entry.idempotencyKey,
      order_key: entry.orderKey ?? null,
      event_type: entry.eventType,
      payload: JSON.stringify(entry.payload),
      state: 'pending',
      attempts: 0,
      max_attempts: entry.maxAttempts ?? this.settings.maxAttempts,
      next_attempt_at: dueAt(entry, now),
      created_at: now,
      updated_at: now,
    }))
    // A key already written (a writer staged the same change twice) is skipped, not an error.
    const ignore = client.dialect.name === 'mysql' ? 'INSERT IGNORE' : 'INSERT OR IGNORE'
    const columns = Object.keys(rows[0]) as (keyof (typeof rows)[number])[]
    for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
      const slice = rows.slice(start, start + INSERT_CHUNK)
      const marks = `(${columns.map(() => '?').join(', ')})`
      await writeQuery(
        client,
        `${ignore} INTO ${DELIVERIES} (${columns.join(', ')}) VALUES ${slice.map(() => marks).join(', ')}`,
        slice.flatMap((row) => columns.map((column) => row[column]))
      )
    }
    // Not awaited: a write that causes a thousand deliveries answers without waiting for a
    // thousand job dispatches (one Redis round trip each with BullMQ). A dispatch lost here (a
    // crash, Redis away) leaves its row pending, and the sweeper dispatches it.
    afterCommit(() => {
      this.dispatchNew(entries).catch((error) =>
        this.logger.warn({ err: error }, 'outbox: dispatch after commit failed; the sweeper will')
      )
    })
    return entries.length
  }

  private async dispatchNew(entries: OutboxEntry[]) {
    const queue = await this.queue()
    const now = Date.now()
    for (const entry of entries) {
      await queue.dispatch(
        OUTBOX_JOB,
        { channel: entry.channel, key: entry.idempotencyKey },
        {
          attempts: 1,
          // A job that runs early (a timer cut short) finds the row not due and leaves it to the sweeper.
          delay: Math.min(Math.max(0, dueAt(entry, now) - now), MAX_DELAY_MS),
          idempotencyKey: jobKey(`new:${entry.channel}:${entry.idempotencyKey}`),
        }
      )
    }
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

  private async dispatchId(id: number, reason: string, delay = 0) {
    const queue = await this.queue()
    await queue.dispatch(OUTBOX_JOB, { id }, { attempts: 1, delay, idempotencyKey: jobKey(reason) })
  }

  /** The job: one attempt of one delivery, if it is due and nobody else has it. */
  async run(payload: OutboxJobPayload): Promise<void> {
    const query = this.db.from(DELIVERIES)
    const row: DeliveryRow | null =
      'id' in payload
        ? await query.where('id', payload.id).first()
        : await query
            .where('channel', payload.channel)
            .where('idempotency_key', payload.key)
            .first()
    if (!row) return // pruned, or the write that staged it rolled back after all
    const id = Number(row.id)
    if (row.order_key && (await this.hasEarlier(row.order_key, id))) return // kicked when the earlier one ends
    const later = () =>
      void this.run(payload).catch((error) =>
        this.logger.error({ err: error, delivery: id }, 'outbox delivery failed to start')
      )
    if (!(await this.slots.take(row.recipient, later))) return // started when a slot frees
    const now = Date.now()
    const claimed = await this.db
      .from(DELIVERIES)
      .where('id', id)
      .where((where) =>
        where
          .where((pending) => pending.where('state', 'pending').where('next_attempt_at', '<=', now))
          .orWhere((lapsed) => lapsed.where('state', 'sending').where('lease_until', '<', now))
      )
      .update({
        state: 'sending',
        attempts: this.db.knexRawQuery('attempts + 1'),
        lease_until: now + this.settings.leaseMs,
        updated_at: now,
      })
      .catch((error) => {
        this.slots.release(row.recipient)
        throw error
      })
    if (Number(Array.isArray(claimed) ? claimed[0] : claimed) !== 1) {
      this.slots.release(row.recipient)
      return
    }
    // The job ends here: the answer is awaited outside the queue's workers (SendSlots).
    void this.attempt(row)
      .catch((error) => this.logger.error({ err: error, delivery: id }, 'outbox attempt failed'))
      .finally(() => this.slots.release(row.recipient))
  }

  /** One attempt of a claimed delivery: send, log, then finish it or schedule the next attempt. */
  private async attempt(row: DeliveryRow) {
    const id = Number(row.id)
    const attempt = Number(row.attempts) + 1
    const delivery = toDelivery(row, attempt)
    const channel = this.channels.get(row.channel)
    let result: AttemptResult
    const started = Date.now()
    if (!channel) {
      result = { outcome: 'retry', error: `no channel "${row.channel}" in this process` }
    } else {
      try {
        result = await channel.send(delivery)
      } catch (error) {
        result = { outcome: 'retry', error: error instanceof Error ? error.message : String(error) }
      }
    }
    const duration = Date.now() - started
    await this.record(delivery, result, started, duration)
    const finished = await this.settle(delivery, result, duration)
    if (finished && channel) {
      try {
        if (result.outcome === 'delivered') await channel.onDelivered?.(delivery)
        else if (result.outcome !== 'cancelled') await channel.onFailed?.(delivery, result)
      } catch (error) {
        this.logger.error({ err: error, delivery: id }, 'outbox channel hook failed')
      }
    }
    if (finished && row.order_key) await this.kickNext(row.order_key, id)
  }

  private async hasEarlier(orderKey: string, id: number) {
    const earlier = await this.db
      .from(DELIVERIES)
      .where('order_key', orderKey)
      .where('id', '<', id)
      .whereIn('state', ['pending', 'sending'])
      .select('id')
      .first()
    return !!earlier
  }

  private async kickNext(orderKey: string, afterId: number) {
    const next = await this.db
      .from(DELIVERIES)
      .where('order_key', orderKey)
      .where('id', '>', afterId)
      .where('state', 'pending')
      .orderBy('id')
      .select('id', 'next_attempt_at')
      .first()
    if (next)
      await this.dispatchId(
        Number(next.id),
        `kick:${next.id}:${afterId}`,
        Math.max(0, Number(next.next_attempt_at) - Date.now())
      )
  }

  private async record(
    delivery: OutboxDelivery,
    result: AttemptResult,
    started: number,
    duration: number
  ) {
    await this.db.table(ATTEMPTS).insert({
      delivery_id: delivery.id,
      attempt: delivery.attempt,
      outcome: result.outcome,
      status: result.status ?? null,
      response: bound(result.response, 1024),
      error: bound(result.error, 500),
      duration_ms: duration,
      started_at: started,
    })
  }

  /** Stores the attempt's outcome; answers whether the delivery is finished. */
  private async settle(delivery: OutboxDelivery, result: AttemptResult, duration: number) {
    const now = Date.now()
    const common = {
      last_status: result.status ?? null,
      last_error: bound(result.error, 500),
      last_duration_ms: duration,
      lease_until: null,
      updated_at: now,
    }
    if (result.outcome === 'retry' && delivery.attempt < delivery.maxAttempts) {
      const delay = retryDelay(this.settings.backoff, delivery.attempt)
      await this.db
        .from(DELIVERIES)
        .where('id', delivery.id)
        .where('state', 'sending')
        .update({ ...common, state: 'pending', next_attempt_at: now + delay })
      await this.dispatchId(delivery.id, `retry:${delivery.id}:${delivery.attempt}`, delay)
      return false
    }
    const state: DeliveryState =
      result.outcome === 'retry' ? 'failed' : (result.outcome as DeliveryState)
    await this.db
      .from(DELIVERIES)
      .where('id', delivery.id)
      .update({ ...common, state, finished_at: now })
    if (state === 'failed')
      this.logger.warn(
        { delivery: delivery.id, channel: delivery.channel, attempts: delivery.attempt },
        'outbox delivery failed for good'
      )
    return true
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
    await this.dispatchId(id, `redeliver:${id}:${row.attempts}:${now}`)
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
   * Dispatches again deliveries whose job was lost: due for longer than the
   * grace period and still pending, or claimed by a worker whose lease
   * lapsed. Several processes may sweep at once: the claim lets one send.
   * A pending delivery behind an earlier one of its order key (waiting out
   * that one's backoff) has no lost job: the earlier one kicks it when it ends.
   */
  async sweep(): Promise<number> {
    const now = Date.now()
    const rows = await this.db
      .from(DELIVERIES)
      .where((where) =>
        where
          .where((pending) =>
            pending
              .where('state', 'pending')
              .where('next_attempt_at', '<=', now - this.settings.sweepGraceMs)
              .whereNotExists((earlier) =>
                earlier
                  .from(`${DELIVERIES} as earlier`)
                  .whereRaw(`earlier.order_key = ${DELIVERIES}.order_key`)
                  .whereRaw(`earlier.id < ${DELIVERIES}.id`)
                  .whereIn('earlier.state', ['pending', 'sending'])
              )
          )
          .orWhere((lapsed) => lapsed.where('state', 'sending').where('lease_until', '<', now))
      )
      .orderBy('id')
      .limit(SWEEP_LIMIT)
      .select('id', 'attempts', 'order_key')
    // Of an order key only the first can go: the others follow it (the query leaves one but in a race).
    const seen = new Set<string>()
    const bucket = Math.floor(now / Math.max(1, this.settings.sweepMs))
    let dispatched = 0
    for (const row of rows) {
      if (row.order_key) {
        if (seen.has(row.order_key)) continue
        seen.add(row.order_key)
      }
      await this.dispatchId(Number(row.id), `sweep:${row.id}:${row.attempts}:${bucket}`)
      dispatched++
    }
    if (dispatched) this.logger.info({ dispatched }, 'outbox: deliveries without a job dispatched')
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now
      await this.prune()
    }
    return dispatched
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
  }
}

function toDelivery(row: DeliveryRow, attempt: number): OutboxDelivery {
  return {
    id: Number(row.id),
    channel: row.channel,
    recipient: row.recipient,
    idempotencyKey: row.idempotency_key,
    orderKey: row.order_key,
    eventType: row.event_type,
    payload: JSON.parse(row.payload),
    state: row.state,
    attempt,
    maxAttempts: Number(row.max_attempts),
    createdAt: Number(row.created_at),
  }
}

/** When an entry may first be sent: now, or its notBefore when later. */
function dueAt(entry: OutboxEntry, now: number) {
  return entry.notBefore !== undefined && entry.notBefore > now ? Math.round(entry.notBefore) : now
}

/** `%`, `_` and the escape character `!` stand for themselves in a LIKE pattern (ESCAPE '!', both databases). */
function escapeLike(text: string) {
  return text.replace(/[!%_]/g, (char) => `!${char}`)
}

function bound(text: string | null | undefined, max: number) {
  if (text === null || text === undefined) return null
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** Queue idempotency keys stay under the queue's 255 characters whatever the entry's key. */
function jobKey(reason: string) {
  return reason.length <= 200
    ? `outbox:${reason}`
    : `outbox:${createHash('sha256').update(reason).digest('hex')}`
}
