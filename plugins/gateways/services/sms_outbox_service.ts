import { randomBytes } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { inject } from '@adonisjs/core'
import { rpcError } from '#core/rpc/errors'
import { readQuery, writeQuery } from '#core/native_sql'
import { StampService } from '#core/services/stamp_service'
import gatewaysConfig from '../config.js'
import { toE164 } from '../lib/phone.js'

const TABLE = 'gateways_sms_outbox'
const GATEWAYS = 'gateways_sms'

export type SmsKind = 'copy' | 'reminder' | 'invitation'

/** An SMS to send (contract 1 of issue 19: copies, reminders and invitations call enqueue). */
export interface OutboundSms {
  /** The recipient, E.164 (other forms are read in GATEWAYS_DEFAULT_REGION). */
  to: string
  text: string
  /** The book it is about: its fixed gateway sends it. */
  bookId?: number | null
  kind: SmsKind
  /** The same key twice is stored (and sent) once. */
  idempotencyKey: string
  /** Not handed to a gateway before this (epoch ms). */
  notBefore?: number
}

/** An SMS handed to a gateway (getGatewayOutbox, the Android app's GET /message). */
export interface LeasedSms {
  id: number
  to: string
  text: string
  kind: SmsKind
  /** Which hand-out this is, first = 1. */
  attempt: number
  createdAt: number
}

/** The wire shape of a gateway's due SMS (getGatewayOutbox's answer, the socket's outbox frame). */
export type GatewayOutbox = {
  /** Seconds the gateway has to report each SMS before it is handed out again. */
  ackSeconds: number
  sms: { id: number; to: string; msg: string; kind: SmsKind; attempt: number }[]
}

/** What a gateway reports of an SMS it was handed. */
export type AckState = 'sent' | 'delivered' | 'failed'

export interface SmsAck {
  id: number
  state: AckState
  reason?: string | null
}

/** How each reported state may follow the current one: a final state never moves back. */
const ACKABLE: Record<AckState, string[]> = {
  sent: ['queued', 'leased'],
  delivered: ['queued', 'leased', 'sent'],
  failed: ['queued', 'leased', 'sent'],
}

const MAX_TEXT = 1600
const MAX_REASON = 255
/** How often web instances look for lapsed leases and SMS fallen due. */
const SWEEP_MS = 30_000

type Listener = (gatewayId: number | null) => void

/**
 * Outbound SMS through the gateways (issue 19 item 2; README "Outbound SMS").
 *
 * enqueue writes the SMS with the caller's client (in its transaction) for
 * the gateway chosen by the rule: the book's gateway (the one fixed to it by
 * an administrator or by its registration), else the least loaded allowed
 * gateway without a fixed book, else the least loaded allowed gateway; none
 * allowed: no gateway yet, the first gateway to collect takes it.
 *
 * A gateway collects its SMS (getGatewayOutbox, or the Android app's GET
 * /message), which leases them for GATEWAYS_SMS_ACK_TIMEOUT_MS; it reports
 * sent, delivered or failed. A lease that lapses unconfirmed puts the SMS
 * back in the queue, at most GATEWAYS_SMS_MAX_ATTEMPTS hand-outs in all, and
 * then it is failed (`unconfirmed`).
 */
@inject()
export class SmsOutboxService {
  private listeners = new Set<Listener>()
  private relay: Listener | null = null

  constructor(private stamps: StampService) {}

  /**
   * Writes the SMS in the caller's transaction; gateways are woken after its
   * commit. `to` must be a valid number (a programming error otherwise, which
   * fails the caller's write): callers check theirs first.
   */
  async enqueue(
    client: QueryClientContract,
    sms: OutboundSms,
    afterCommit: (callback: () => unknown) => void
  ): Promise<void> {
    const phone = toE164(sms.to, gatewaysConfig.defaultRegion)
    if (!phone) throw new Error(`SmsOutboxService.enqueue: not a valid phone number: ${sms.to}`)
    const gatewayId = await this.chooseGateway(client, sms.bookId ?? null)
    const now = Date.now()
    const row = {
      gateway_id: gatewayId,
      idempotency_key: sms.idempotencyKey.slice(0, 191),
      kind: sms.kind,
      phone,
      text: sms.text.slice(0, MAX_TEXT),
      book_id: sms.bookId ?? null,
      state: 'queued',
      attempts: 0,
      not_before: sms.notBefore ?? now,
      created_at: now,
      updated_at: now,
    }
    // A key already written (the caller wrote the same SMS twice) is skipped, not an error.
    const ignore = client.dialect.name === 'mysql' ? 'INSERT IGNORE' : 'INSERT OR IGNORE'
    const columns = Object.keys(row) as (keyof typeof row)[]
    await writeQuery(
      client,
      `${ignore} INTO ${TABLE} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      columns.map((column) => row[column])
    )
    afterCommit(() => {
      this.wake(gatewayId)
      this.relay?.(gatewayId)
    })
  }

  /** The gateway an SMS goes to (the rule in the class comment); null when none is allowed. */
  async chooseGateway(client: QueryClientContract, bookId: number | null): Promise<number | null> {
    // Plain statements (readQuery): they run in the transactions of new messages, which
    // MessageWriter begins on the driver (StampService.writeNative), with no query builder.
    if (bookId !== null) {
      const [book] = await readQuery(
        'SELECT u.code AS owner, b.code AS code FROM books b JOIN users u ON u.id = b.owner_id' +
          ' WHERE b.id = ? LIMIT 1',
        [bookId],
        client
      )
      if (book) {
        const [fixed] = await readQuery(
          `SELECT id FROM ${GATEWAYS} WHERE allowed = ?` +
            ' AND ((book_owner = ? AND book_code = ?)' +
            ' OR (book_owner IS NULL AND session_book_owner = ? AND session_book_code = ?))' +
            ' ORDER BY id LIMIT 1',
          [true, book.owner, book.code, book.owner, book.code],
          client
        )
        if (fixed) return Number(fixed.id)
      }
    }
    const gateways = await readQuery(
      `SELECT g.id, g.book_owner, g.session_book_owner,` +
        ` (SELECT COUNT(*) FROM ${TABLE} o WHERE o.gateway_id = g.id AND o.state IN ('queued', 'leased')) AS open_count` +
        ` FROM ${GATEWAYS} g WHERE g.allowed = ?`,
      [true],
      client
    )
    const byLoad = (a: any, b: any) =>
      Number(a.open_count) - Number(b.open_count) || Number(a.id) - Number(b.id)
    const free = gateways.filter((g: any) => !g.book_owner && !g.session_book_owner).sort(byLoad)
    const chosen = free[0] ?? [...gateways].sort(byLoad)[0]
    return chosen ? Number(chosen.id) : null
  }

  /**
   * Hands the gateway its SMS that are due (oldest first, at most `limit`):
   * each is leased to it for the acknowledgement time. SMS queued while no
   * gateway was allowed are taken by the first gateway that collects.
   */
  async collect(gatewayId: number, limit = 20): Promise<LeasedSms[]> {
    await this.requeueLapsed()
    const now = Date.now()
    const candidates = await db
      .from(TABLE)
      .where((where) => where.where('gateway_id', gatewayId).orWhereNull('gateway_id'))
      .where('state', 'queued')
      .where('not_before', '<=', now)
      .orderBy('id')
      .limit(limit)
      .select('id')
    if (candidates.length === 0) return []
    const token = randomBytes(16).toString('hex')
    // One conditional UPDATE: a row another collection leased meanwhile is not taken twice.
    await this.stamps.writeStatement(({ client }) =>
      client
        .from(TABLE)
        .whereIn(
          'id',
          candidates.map((row) => Number(row.id))
        )
        .where('state', 'queued')
        .where((where) => where.where('gateway_id', gatewayId).orWhereNull('gateway_id'))
        .update({
          gateway_id: gatewayId,
          state: 'leased',
          lease_until: now + gatewaysConfig.smsAckTimeoutMs,
          lease_token: token,
          attempts: db.knexRawQuery('attempts + 1'),
          updated_at: now,
        })
    )
    const leased = await db.from(TABLE).where('lease_token', token).orderBy('id')
    return leased.map((row) => ({
      id: Number(row.id),
      to: row.phone,
      text: row.text,
      kind: row.kind,
      attempt: Number(row.attempts),
      createdAt: Number(row.created_at),
    }))
  }

  /**
   * A gateway's outbox as it receives it, from getGatewayOutbox and on its
   * socket alike (README "Outbound SMS"): its due SMS, leased by collect().
   */
  async handOut(gatewayId: number, limit = 20): Promise<GatewayOutbox> {
    const leased = await this.collect(gatewayId, limit)
    return {
      ackSeconds: Math.round(gatewaysConfig.smsAckTimeoutMs / 1000),
      sms: leased.map((sms) => ({
        id: sms.id,
        to: sms.to,
        msg: sms.text,
        kind: sms.kind,
        attempt: sms.attempt,
      })),
    }
  }

  /**
   * The gateway's reports. Every id must be one of its SMS: otherwise
   * NOT_FOUND and nothing written, or, with `unknown: 'skip'` (the Android
   * app's reports: its own server ignores ids it does not know), those are
   * skipped. A report that would move a final state back (delivered,
   * failed) is ignored, so repeats are harmless.
   */
  async ack(
    gatewayId: number,
    acks: SmsAck[],
    options: { unknown: 'refuse' | 'skip' } = { unknown: 'refuse' }
  ): Promise<{ updated: number }> {
    const ids = [...new Set(acks.map((item) => item.id))]
    if (ids.length === 0) return { updated: 0 }
    const owned = await db
      .from(TABLE)
      .whereIn('id', ids)
      .where('gateway_id', gatewayId)
      .select('id')
    const known = new Set(owned.map((row) => Number(row.id)))
    if (owned.length !== ids.length && options.unknown === 'refuse') {
      const unknown = ids.filter((id) => !known.has(id))
      throw rpcError('NOT_FOUND', `Not an SMS of this gateway: ${unknown.join(', ')}`, {
        field: 'ids',
      })
    }
    const mine = acks.filter((item) => known.has(item.id))
    if (mine.length === 0) return { updated: 0 }
    const now = Date.now()
    return this.stamps.write(async ({ trx }) => {
      let updated = 0
      for (const item of mine) {
        updated += Number(
          await trx
            .from(TABLE)
            .where('id', item.id)
            .whereIn('state', ACKABLE[item.state])
            .update({
              state: item.state,
              reason: item.state === 'failed' ? (item.reason ?? '').slice(0, MAX_REASON) : null,
              lease_until: null,
              lease_token: null,
              updated_at: now,
            })
        )
      }
      return { updated }
    })
  }

  /**
   * Leases lapsed unconfirmed: back to the queue (their gateways are woken),
   * or failed once they were handed out GATEWAYS_SMS_MAX_ATTEMPTS times. Run
   * before every collection and by each web instance's sweep.
   */
  async requeueLapsed() {
    const now = Date.now()
    const lapsed = () => db.from(TABLE).where('state', 'leased').where('lease_until', '<', now)
    const [exhausted, retried] = await Promise.all([
      lapsed().where('attempts', '>=', gatewaysConfig.smsMaxAttempts).select('id'),
      lapsed().where('attempts', '<', gatewaysConfig.smsMaxAttempts).select('id', 'gateway_id'),
    ])
    if (exhausted.length === 0 && retried.length === 0) return
    const requeued = await this.stamps.write(async ({ trx }) => {
      const finish = (rows: { id: number }[], fields: Record<string, unknown>) =>
        rows.length === 0
          ? 0
          : trx
              .from(TABLE)
              .whereIn(
                'id',
                rows.map((row) => Number(row.id))
              )
              .where('state', 'leased')
              .where('lease_until', '<', now)
              .update({ lease_until: null, lease_token: null, updated_at: now, ...fields })
      await finish(exhausted, {
        state: 'failed',
        reason: `unconfirmed after ${gatewaysConfig.smsMaxAttempts} hand-outs`,
      })
      return Number(await finish(retried, { state: 'queued' }))
    })
    if (requeued === 0) return
    for (const gatewayId of new Set(retried.map((row) => Number(row.gateway_id)))) {
      this.wake(gatewayId)
      this.relay?.(gatewayId)
    }
  }

  /**
   * A web instance's periodic work (every SWEEP_MS): lapsed leases, and the
   * local event streams of gateways whose scheduled SMS (notBefore) fell due
   * since the last sweep. Every instance sweeps; the UPDATEs let one win.
   */
  startSweeping() {
    let since = Date.now()
    const timer = setInterval(() => {
      const now = Date.now()
      const due = db
        .from(TABLE)
        .where('state', 'queued')
        .where('not_before', '>', since)
        .where('not_before', '<=', now)
        .distinct('gateway_id')
      since = now
      Promise.all([this.requeueLapsed(), due])
        .then(([, rows]) => {
          for (const row of rows) this.wake(row.gateway_id === null ? null : Number(row.gateway_id))
        })
        // A sweep that fails (the database restarting) is the next one's to do.
        .catch(() => {})
    }, SWEEP_MS)
    timer.unref()
  }

  /** Whether the gateway has SMS due (the Android event stream wakes the phone at once when so). */
  async hasDue(gatewayId: number) {
    const row = await db
      .from(TABLE)
      .where((where) => where.where('gateway_id', gatewayId).orWhereNull('gateway_id'))
      .where('state', 'queued')
      .where('not_before', '<=', Date.now())
      .select('id')
      .first()
    return !!row
  }

  /** An SMS by id (tests, the console). */
  find(id: number) {
    return db.from(TABLE).where('id', id).first()
  }

  /** Called when SMS were queued for a gateway (null: for whichever collects first), in this process. */
  onEnqueued(listener: Listener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** How other instances learn of SMS queued here (the plugin's realtime binding: the hub's channel). */
  relayTo(relay: Listener) {
    this.relay = relay
  }

  /** Tells this process's listeners (the Android event streams) that a gateway has SMS waiting. */
  wake(gatewayId: number | null) {
    for (const listener of this.listeners) listener(gatewayId)
  }
}
