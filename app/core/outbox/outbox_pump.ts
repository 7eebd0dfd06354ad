import { randomUUID } from 'node:crypto'
import type { Logger } from '@adonisjs/core/logger'
import { nativeTransaction, readQuery, trxQuery, writeQuery } from '#core/native_sql'
import db from '@adonisjs/lucid/services/db'
import { retryDelay, type BackoffPolicy } from './backoff.js'
import type { SendSlots } from './send_slots.js'
import type { WritesFirst } from './writes_first.js'
import type { AttemptResult, DeliveryState, OutboxChannel, OutboxDelivery } from './types.js'

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

export interface PumpSettings {
  backoff: BackoffPolicy
  leaseMs: number
}

/** What the pump needs from the outbox that owns it. */
export interface PumpHost {
  channels: ReadonlyMap<string, OutboxChannel>
  slots: SendSlots
  settings: PumpSettings
  logger: Logger
  /** Makes a sending process look again at `at` (the earliest retry just scheduled). */
  kickAt(at: number): void
  /**
   * Where sends run when not here: the web process's sending process
   * (OUTBOX_SENDER=process), or null. The pump keeps the claims and the log;
   * only the sends (channel `prepare` and `send`) run there.
   */
  remote(): RemoteSender | null
  /** How long deliveries may wait while writes saturate this process (null: never held back). */
  writesFirst: WritesFirst | null
}

/** Sends run in another process (detached_sender.ts): this one claims, logs and runs the hooks. */
export interface RemoteSender {
  /** Whether sends can be handed over now (false while it starts or restarts: nothing is claimed). */
  readonly ready: boolean
  /** Sends deliveries of one channel there (prepared together); answers each one's result. */
  send(channel: string, deliveries: OutboxDelivery[]): Promise<AttemptResult>[]
}

const DELIVERIES = 'outbox_deliveries'
/** A delivery whose order key has no earlier one pending or being sent (docs/outbox.md, "Order per key"). */
const ORDER_KEY_FREE =
  `(d.order_key IS NULL OR NOT EXISTS (SELECT 1 FROM ${DELIVERIES} e` +
  ` WHERE e.order_key = d.order_key AND e.id < d.id AND e.state IN ('pending', 'sending')))`
/** Deliveries claimed by one statement. */
const BATCH = 100
/** While a kick's window is open, how often an empty claim is tried again. */
const POLL_MS = 20
/** Attempts are written together: after this delay, or at once past FLUSH_ROWS. */
const FLUSH_MS = 5
const FLUSH_ROWS = 200
/** A send lost with the process running it is tried again this soon. */
const UNSENT_RETRY_MS = 1_000
/** Sends ending while rows wait for room are answered by one claim this long after the first. */
const STARVED_CLAIM_MS = 10

/** One attempt's end, waiting to be written with others. */
interface Ended {
  delivery: OutboxDelivery
  result: AttemptResult
  started: number
  duration: number
  /** The row's state after it, and when it is tried again (retries). */
  state: DeliveryState
  nextAttemptAt: number | null
}

/**
 * Sends what is due, many deliveries per statement. One pump per process
 * that sends (the web process with the in-process queue or an inline
 * worker; each `queue:work`). Woken after a commit staged deliveries (in
 * this process directly, in others through a `core.outbox` kick job), at a
 * retry's due time and by the sweeper, it claims due deliveries in batches
 * with one conditional UPDATE (a token tells which rows this process won
 * when several pump at once), starts their sends without waiting, and
 * writes their attempts and states in one transaction per flush. A process
 * killed mid-send leaves its claims to lapse (lease_until); the sweeper's
 * kick then has them claimed again: at least once, never lost.
 *
 * Order per key: a delivery is claimable only while no earlier one of its
 * order key is pending or being sent, so a key's deliveries go one after
 * the other; each flush that finishes one looks again for its successor.
 */
export class OutboxPump {
  private running = false
  private again = false
  /** Keep claiming until a claim that started after this time found nothing. */
  private openUntil = 0
  private reclaim = false
  /** A claim left due rows for want of room: a send that ends should look again. */
  private starved = false
  private ended: Ended[] = []
  private flushTimer: NodeJS.Timeout | null = null
  private flushing: Promise<void> = Promise.resolve()
  private wakeTimer: NodeJS.Timeout | null = null
  /** Where dueWithRoom's walk of the recipients goes on (after this one). */
  private recipientCursor = ''
  /** Claims held back while writes saturate this process: when to look again. */
  private yieldTimer: NodeJS.Timeout | null = null
  /** A graceful stop began: nothing more is claimed. */
  private stopped = false

  constructor(private host: PumpHost) {}

  /**
   * Claims and starts what is due. `openUntil`: a kick's window (a commit
   * in another process before that time may not be visible to a claim made
   * earlier); `reclaim`: also take back deliveries whose claim lapsed.
   */
  wake(openUntil = 0, reclaim = false) {
    if (this.stopped) return
    // Held back for the writes: its timer looks again (a plain kick changes nothing meanwhile).
    if (this.yieldTimer && openUntil <= this.openUntil && !reclaim) return
    this.openUntil = Math.max(this.openUntil, openUntil)
    if (reclaim) this.reclaim = true
    if (this.running) {
      this.again = true
      return
    }
    this.running = true
    void this.loop()
      .catch((error) =>
        this.host.logger.error({ err: error }, 'outbox: claiming deliveries failed')
      )
      .finally(() => {
        this.running = false
        if (this.again) this.wake()
      })
  }

  /**
   * After sends end while rows wait for room: one claim for the sends that end
   * within STARVED_CLAIM_MS, not one each (a claim that finds only recipients
   * without room reads every row they have waiting).
   */
  private wakeSoon() {
    if (this.wakeTimer) return
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null
      this.wake()
    }, STARVED_CLAIM_MS)
  }

  /**
   * Writes saturate this process and deliveries wait: the pump looks again in
   * `delay` ms (one timer, however many kicks meanwhile).
   */
  private yieldToWrites(delay: number) {
    if (this.yieldTimer) return
    this.yieldTimer = setTimeout(() => {
      this.yieldTimer = null
      this.wake()
    }, delay)
  }

  private async loop() {
    for (;;) {
      this.again = false
      const startedAt = Date.now()
      if (this.stopped) return
      const room = Math.min(BATCH, this.host.slots.room)
      if (room === 0) this.starved = true
      const writesFirst = this.host.writesFirst
      const dueBy = writesFirst ? writesFirst.dueBy(startedAt) : startedAt
      // Writes saturate the process: only what waited long enough goes now, the timer looks again.
      const held = dueBy < startedAt
      if (held) this.yieldToWrites(writesFirst!.retryMs())
      if (room > 0) {
        const reclaim = this.reclaim
        this.reclaim = false
        const { rows, more, limited } = await this.claim(room, startedAt, reclaim, dueBy)
        // Rows left for want of room: every send that ends looks again, until a claim leaves
        // none (set before the sends start: one may end before start() returns).
        this.starved = limited
        if (rows.length) await this.start(rows)
        if (more && this.host.slots.room > 0) continue
      }
      if (held) return
      if (this.again) continue
      if (startedAt <= this.openUntil) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS))
        continue
      }
      return
    }
  }

  /**
   * Up to `limit` deliveries due by `dueBy` (now, or earlier while writes
   * saturate the process), claimed for this process (lease and token).
   */
  private async claim(
    limit: number,
    now: number,
    reclaim: boolean,
    dueBy = now
  ): Promise<{ rows: DeliveryRow[]; more: boolean; limited: boolean }> {
    const saturated = this.host.slots.saturated()
    // Only channels this process can send (a process without a plugin leaves its rows to others).
    const channels = [...this.host.channels.keys()]
    const remote = this.host.remote()
    if (channels.length === 0 || (remote && !remote.ready))
      return { rows: [], more: false, limited: false }
    const candidates =
      saturated.length && !reclaim
        ? await this.dueWithRoom(limit, dueBy, channels)
        : await this.due(limit, now, dueBy, channels, reclaim, saturated)
    const more = candidates.length === limit
    // A recipient gets no more than its room (a slow one must not take the batch).
    const budget = new Map<string, number>()
    const wanted = candidates.filter((row) => {
      const left = budget.get(row.recipient) ?? this.host.slots.roomFor(row.recipient)
      budget.set(row.recipient, left - 1)
      return left > 0
    })
    // Left for want of room: more due than asked for, a recipient skipped or cut.
    const limited = more || saturated.length > 0 || wanted.length < candidates.length
    if (wanted.length === 0) return { rows: [], more, limited }
    const token = randomUUID()
    const ids = wanted.map((row) => Number(row.id))
    const marks = ids.map(() => '?').join(', ')
    const result = await writeQuery(
      db.connection(),
      `UPDATE ${DELIVERIES} SET state = 'sending', attempts = attempts + 1, lease_until = ?,` +
        ` lease_token = ?, updated_at = ? WHERE id IN (${marks})` +
        ` AND ((state = 'pending' AND next_attempt_at <= ?) OR (state = 'sending' AND lease_until < ?))`,
      [now + this.host.settings.leaseMs, token, now, ...ids, dueBy, now]
    )
    if (affected(result) === wanted.length) return { rows: wanted, more, limited }
    // Another process won some of them: keep the ones carrying this claim's token.
    const won = await readQuery(
      `SELECT id FROM ${DELIVERIES} WHERE id IN (${marks}) AND lease_token = ?`,
      [...ids, token]
    )
    const mine = new Set(won.map((row) => Number(row.id)))
    return { rows: wanted.filter((row) => mine.has(Number(row.id))), more, limited }
  }

  /**
   * Up to `limit` due deliveries, oldest first, of every recipient with room
   * (`skip`: those without). One walk of the due rows in order: cheap while
   * the first rows are claimable, a walk of the backlog when they belong to
   * recipients without room (see dueWithRoom).
   */
  private async due(
    limit: number,
    now: number,
    dueBy: number,
    channels: string[],
    reclaim: boolean,
    skip: string[]
  ): Promise<DeliveryRow[]> {
    const due = `(d.state = 'pending' AND d.next_attempt_at <= ?)`
    const lapsed = `(d.state = 'sending' AND d.lease_until < ?)`
    const bindings: unknown[] = reclaim ? [dueBy, now] : [dueBy]
    bindings.push(...channels)
    let sql =
      `SELECT d.* FROM ${DELIVERIES} d WHERE ${reclaim ? `(${due} OR ${lapsed})` : due}` +
      ` AND d.channel IN (${channels.map(() => '?').join(', ')}) AND ${ORDER_KEY_FREE}`
    if (skip.length) {
      sql += ` AND d.recipient NOT IN (${skip.map(() => '?').join(', ')})`
      bindings.push(...skip)
    }
    sql += ` ORDER BY d.next_attempt_at, d.id LIMIT ?`
    bindings.push(limit)
    return (await readQuery(sql, bindings)) as DeliveryRow[]
  }

  /**
   * `due` when some recipients have no room: the rows waiting for them may be
   * most of the due ones (a receiver slower than the writes, deliveries held
   * back for the writes), and one walk in time order would read them all at
   * every claim. Instead: the recipients with pending rows (one index seek
   * each), then one index range per recipient with room, at most its room
   * each, merged oldest first.
   */
  private async dueWithRoom(limit: number, dueBy: number, channels: string[]) {
    // At most `limit` recipients (one statement's ranges), from where the last claim stopped
    // and around: with more recipients than that, each one's turn comes.
    const withRoom: string[] = []
    const start = this.recipientCursor
    let last = start
    let wrapped = false
    while (withRoom.length < limit) {
      const [next] = await readQuery(
        `SELECT recipient FROM ${DELIVERIES} WHERE state = 'pending' AND recipient > ?` +
          ` ORDER BY recipient LIMIT 1`,
        [last]
      )
      // Past the start again (the database's collation decides the order: a recipient seen twice ends it too).
      if (next && wrapped && (next.recipient > start || withRoom.includes(next.recipient))) break
      if (!next) {
        if (wrapped || start === '') break
        wrapped = true
        last = ''
        continue
      }
      last = next.recipient
      if (this.host.slots.roomFor(last) > 0) withRoom.push(last)
    }
    this.recipientCursor = withRoom.length === limit ? last : ''
    if (withRoom.length === 0) return []
    const marks = channels.map(() => '?').join(', ')
    const ranges = withRoom.map(
      () =>
        `SELECT * FROM (SELECT d.* FROM ${DELIVERIES} d WHERE d.state = 'pending' AND d.recipient = ?` +
        ` AND d.next_attempt_at <= ? AND d.channel IN (${marks}) AND ${ORDER_KEY_FREE}` +
        ` ORDER BY d.next_attempt_at, d.id LIMIT ?) r`
    )
    const rows = (await readQuery(
      ranges.join(' UNION ALL '),
      withRoom.flatMap((recipient) => [
        recipient,
        dueBy,
        ...channels,
        Math.min(limit, this.host.slots.roomFor(recipient)),
      ])
    )) as DeliveryRow[]
    rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id)
    return rows.slice(0, limit)
  }

  /** Starts the sends of claimed rows: each channel prepares its batch once, then sends each. */
  private async start(rows: DeliveryRow[]) {
    const byChannel = new Map<string, OutboxDelivery[]>()
    for (const row of rows) {
      const delivery = toDelivery(row, Number(row.attempts) + 1)
      this.host.slots.acquire(delivery.recipient)
      const list = byChannel.get(delivery.channel) ?? []
      list.push(delivery)
      byChannel.set(delivery.channel, list)
    }
    const remote = this.host.remote()
    for (const [name, deliveries] of byChannel) {
      const sends = remote
        ? remote.send(name, deliveries)
        : await sendHere(this.host.channels.get(name), name, deliveries, this.host.logger)
      deliveries.forEach((delivery, index) => {
        void this.attempt(delivery, sends[index])
          .catch((error) =>
            this.host.logger.error({ err: error, delivery: delivery.id }, 'outbox attempt failed')
          )
          .finally(() => {
            this.host.slots.release(delivery.recipient)
            if (this.starved) this.wakeSoon()
          })
      })
    }
  }

  /** Waits for one send's result and queues its attempt for the next flush. */
  private async attempt(delivery: OutboxDelivery, send: Promise<AttemptResult>) {
    const started = Date.now()
    const result = await settle(send)
    const now = Date.now()
    const retry =
      result.outcome === 'retry' &&
      (result.unsent === true || delivery.attempt < delivery.maxAttempts)
    this.ended.push({
      delivery,
      result,
      started,
      duration: now - started,
      state: retry ? 'pending' : result.outcome === 'retry' ? 'failed' : result.outcome,
      nextAttemptAt: retry
        ? now +
          (result.unsent
            ? UNSENT_RETRY_MS
            : retryDelay(this.host.settings.backoff, delivery.attempt))
        : null,
    })
    if (this.ended.length >= FLUSH_ROWS) this.flushSoon(0)
    else this.flushSoon(FLUSH_MS)
  }

  private flushSoon(delay: number) {
    if (this.flushTimer && delay > 0) return
    if (this.flushTimer) clearTimeout(this.flushTimer)
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null
      this.flushing = this.flushing.then(() =>
        this.flush().catch((error) =>
          this.host.logger.error({ err: error }, 'outbox: writing attempts failed')
        )
      )
    }, delay)
  }

  /** Writes every attempt ended so far (their log and their rows), then runs the channels' hooks. */
  async flush() {
    while (this.ended.length) {
      const batch = this.ended.splice(0, FLUSH_ROWS)
      await nativeTransaction(async (trx) => {
        await trxQuery(
          trx,
          `INSERT INTO outbox_attempts (delivery_id, attempt, outcome, status, response, error,` +
            ` duration_ms, started_at) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
          batch.flatMap((end) => [
            end.delivery.id,
            end.delivery.attempt,
            end.result.outcome,
            end.result.status ?? null,
            bound(end.result.response, 1024),
            bound(end.result.error, 500),
            end.duration,
            end.started,
          ])
        )
        const now = Date.now()
        // One value per row: CASE id WHEN <id> THEN <value> ... (ELSE the column: rows not named keep it).
        const cases = (value: (end: Ended) => unknown, column: string, ends = batch) => {
          const bindings: unknown[] = []
          const whens = ends.map((end) => {
            bindings.push(end.delivery.id, value(end))
            return 'WHEN ? THEN ?'
          })
          return { sql: `CASE id ${whens.join(' ')} ELSE ${column} END`, bindings }
        }
        const retried = batch.filter((end) => end.nextAttemptAt !== null)
        const columns: Record<string, { sql: string; bindings: unknown[] }> = {
          state: cases((end) => end.state, 'state'),
          last_status: cases((end) => end.result.status ?? null, 'last_status'),
          last_error: cases((end) => bound(end.result.error, 500), 'last_error'),
          last_duration_ms: cases((end) => end.duration, 'last_duration_ms'),
          finished_at: cases((end) => (end.nextAttemptAt === null ? now : null), 'finished_at'),
        }
        if (retried.length)
          columns.next_attempt_at = cases((end) => end.nextAttemptAt, 'next_attempt_at', retried)
        const ids = batch.map((end) => end.delivery.id)
        await trxQuery(
          trx,
          `UPDATE ${DELIVERIES} SET ${Object.entries(columns)
            .map(([column, value]) => `${column} = ${value.sql}`)
            .join(', ')}, lease_until = NULL, lease_token = NULL, updated_at = ?` +
            ` WHERE id IN (${ids.map(() => '?').join(', ')})`,
          [...Object.values(columns).flatMap((value) => value.bindings), now, ...ids]
        )
      })
      let successors = false
      let nextRetry = Infinity
      for (const end of batch) {
        if (end.nextAttemptAt !== null) {
          nextRetry = Math.min(nextRetry, end.nextAttemptAt)
          continue
        }
        if (end.delivery.orderKey) successors = true
        if (end.state === 'failed')
          this.host.logger.warn(
            {
              delivery: end.delivery.id,
              channel: end.delivery.channel,
              attempts: end.delivery.attempt,
            },
            'outbox delivery failed for good'
          )
        await this.runHooks(end)
      }
      if (nextRetry < Infinity) this.host.kickAt(nextRetry)
      if (successors) this.wake()
    }
  }

  private async runHooks(end: Ended) {
    const channel = this.host.channels.get(end.delivery.channel)
    if (!channel) return
    try {
      if (end.state === 'delivered') await channel.onDelivered?.(end.delivery, end.result)
      else if (end.state !== 'cancelled') await channel.onFailed?.(end.delivery, end.result)
    } catch (error) {
      this.host.logger.error(
        { err: error, delivery: end.delivery.id },
        'outbox channel hook failed'
      )
    }
  }

  /**
   * A graceful stop (a sending process told to end): claims nothing more,
   * waits up to `graceMs` for the sends in flight, and writes their attempts.
   * A send still running then keeps its claim, which lapses: sent again later.
   */
  async stop(graceMs: number) {
    this.stopped = true
    const deadline = Date.now() + graceMs
    while (this.host.slots.active > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    await this.settled()
  }

  /** Waits for the attempts ended so far to be written (tests, a graceful stop). */
  async settled() {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer)
      this.flushTimer = null
      this.flushing = this.flushing.then(() => this.flush())
    }
    await this.flushing
  }
}

/**
 * Starts the sends of one channel's deliveries in this process: the channel
 * prepares the batch once, then each send starts (the web process inline, a
 * queue worker, or the sending process for the web process's pump).
 */
export async function sendHere(
  channel: OutboxChannel | undefined,
  name: string,
  deliveries: OutboxDelivery[],
  logger: Logger
): Promise<Promise<AttemptResult>[]> {
  if (!channel)
    return deliveries.map(async () => ({
      outcome: 'retry' as const,
      error: `no channel "${name}" in this process`,
    }))
  let prepared: unknown
  try {
    prepared = await channel.prepare?.(deliveries)
  } catch (error) {
    logger.error({ err: error, channel: name }, 'outbox: preparing sends failed')
  }
  return deliveries.map((delivery) =>
    settle(Promise.resolve().then(() => channel.send(delivery, prepared)))
  )
}

/** A send's result; a send that throws is tried again. */
async function settle(send: Promise<AttemptResult>): Promise<AttemptResult> {
  try {
    return await send
  } catch (error) {
    return { outcome: 'retry', error: error instanceof Error ? error.message : String(error) }
  }
}

/** Rows changed by an UPDATE, from either driver's answer. */
function affected(result: any): number {
  return Number(result?.changes ?? result?.affectedRows ?? 0)
}

export function toDelivery(row: DeliveryRow, attempt: number): OutboxDelivery {
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

export function bound(text: string | null | undefined, max: number) {
  if (text === null || text === undefined) return null
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
