import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { generateKey, hashKey } from '#core/auth/keys'
import {
  GATEWAY_SESSKEY_PREFIX,
  isGatewaySesskey,
  type GatewayAuthenticator,
  type GatewayPrincipal,
  type GatewaySocket,
} from '#core/auth/gateway_auth'
import type { Credentials } from '#core/auth/resolve_actor'
import { dbTimestamp } from '#core/db_time'
import { isUniqueViolation } from '#core/services/db_errors'
import { StampService } from '#core/services/stamp_service'
import { AuditLog, SYSTEM_ACTOR, type AuditActor } from '#core/audit/audit_log'
import { UserService } from '#core/services/user_service'
import { NO_RESTRICTIONS } from '#models/api_session'
import type ApiSession from '#models/api_session'
import type User from '#models/user'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import gatewaysConfig from '../config.js'
import { phoneForms, toE164 } from '../lib/phone.js'
import { GatewayLimits } from './gateway_limits.js'
import { GatewaySockets } from '../socket/gateway_sockets.js'

const TABLE = 'gateways_sms'

export interface BookPair {
  b_o: string
  b_c: string
}

/** An authenticated gateway, with the book its messages go to (null: each message names it). */
export interface SmsGateway extends GatewayPrincipal {
  book: BookPair | null
}

export interface RegisterInput {
  o_u: string
  appname: string
  b_o?: string
  b_c?: string
  ip: string
}

/** How often a gateway's last_used_at is written (it only informs the console). */
const TOUCH_INTERVAL_MS = 60_000

const pair = (owner: unknown, code: unknown): BookPair | null =>
  owner && code ? { b_o: String(owner), b_c: String(code) } : null

/** A gateway row as the principal of its requests: the administrator's book, else the registration's. */
const gatewayOf = (row: Record<string, any>): SmsGateway => ({
  id: Number(row.id),
  phone: row.phone,
  book: pair(row.book_owner, row.book_code) ?? pair(row.session_book_owner, row.session_book_code),
})

/**
 * SMS gateways (spec 4.A.2, 5.A.6): an administrator allows a number
 * (gateway:allow), the phone registers (registerSMSGateway) and gets a
 * sesskey bound to the gateway, and its sendMsg calls act as the user owning
 * the sender's number. Registrations of numbers not allowed are recorded as
 * pending. The kernel's dispatcher reaches authenticate() and actorFor(),
 * and its socket attachSocket(), through GatewayAuth (installed by the plugin's provider).
 */
@inject()
export class SmsGatewayService implements GatewayAuthenticator {
  private touched = new Map<number, number>()

  constructor(
    private stamps: StampService,
    private users: UserService,
    private books: BookAccessService,
    private limits: GatewayLimits,
    private sockets: GatewaySockets,
    private audit: AuditLog
  ) {}

  /** A parameter read as a phone number in E.164 (the default region applies), or a nok naming it. */
  phoneOf(raw: string | undefined, field: string): string {
    if (!raw?.trim()) throw rpcError('MISSING_PARAMETER', `Missing parameter: ${field}`, { field })
    const phone = toE164(raw, gatewaysConfig.defaultRegion)
    if (!phone) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter ${field}: not a valid phone number${gatewaysConfig.defaultRegion ? '' : ' (give it with its country code, +...)'}`,
        { field }
      )
    }
    return phone
  }

  /**
   * registerSMSGateway: a new sesskey for an allowed number (it replaces the
   * gateway's previous one), bound to the book given, if any. A number not
   * allowed is recorded as pending (with what it asked for) and refused.
   */
  async register(input: RegisterInput): Promise<{ sesskey: string; gateway: SmsGateway }> {
    const phone = this.phoneOf(input.o_u, 'o_u')
    const requested = this.bookParameters(input)
    await this.limits.gateway(phone)
    const row = await db.from(TABLE).where('phone', phone).first()
    if (!row?.allowed) {
      await this.recordPending(phone, input, requested)
      throw rpcError(
        'GATEWAY_PENDING',
        `The number ${phone} is not allowed as an SMS gateway yet: an administrator must allow it`,
        { process: 'gateway pending' }
      )
    }
    const fixed = pair(row.book_owner, row.book_code)
    if (requested && fixed && (requested.b_o !== fixed.b_o || requested.b_c !== fixed.b_c)) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter b_c: an administrator fixed this gateway's book to ${fixed.b_o}/${fixed.b_c}`,
        { field: 'b_c' }
      )
    }
    if (requested && !fixed && !(await this.books.resolve(requested.b_o, requested.b_c))) {
      throw rpcError('NOT_FOUND', 'Book not found')
    }
    const sesskey = `${GATEWAY_SESSKEY_PREFIX}${generateKey()}`
    const now = dbTimestamp()
    await this.stamps.write(({ trx }) =>
      trx
        .from(TABLE)
        .where('id', row.id)
        .update({
          key_hash: hashKey(sesskey),
          appname: input.appname.slice(0, 191),
          requested_ip: input.ip.slice(0, 64),
          requested_at: now,
          requested_book_owner: requested?.b_o ?? null,
          requested_book_code: requested?.b_c ?? null,
          session_book_owner: requested?.b_o ?? null,
          session_book_code: requested?.b_c ?? null,
          registered_at: now,
          last_used_at: now,
        })
    )
    // The previous sesskey is dead: sockets attached with it close.
    this.sockets.end(Number(row.id))
    return { sesskey, gateway: { id: Number(row.id), phone, book: fixed ?? requested } }
  }

  /** b_o and b_c go together: both or neither. */
  private bookParameters(input: { b_o?: string; b_c?: string }): BookPair | null {
    const owner = input.b_o?.trim() ?? ''
    const code = input.b_c?.trim() ?? ''
    if (owner === '' && code === '') return null
    if (code === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: b_c', { field: 'b_c' })
    if (owner === '')
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: b_o', { field: 'b_o' })
    return { b_o: owner, b_c: code }
  }

  private async recordPending(phone: string, input: RegisterInput, requested: BookPair | null) {
    const attempt = {
      appname: input.appname.slice(0, 191),
      requested_ip: input.ip.slice(0, 64),
      requested_at: dbTimestamp(),
      requested_book_owner: requested?.b_o ?? null,
      requested_book_code: requested?.b_c ?? null,
    }
    await this.stamps.write(async ({ trx }) => {
      const updated = await trx.from(TABLE).where('phone', phone).update(attempt)
      if (Number(updated) > 0) return
      try {
        await trx
          .table(TABLE)
          .insert({ phone, allowed: false, created_at: dbTimestamp(), ...attempt })
      } catch (error) {
        // The same number registering twice at once: the other request recorded it.
        if (!isUniqueViolation(error)) throw error
      }
    })
  }

  /** unregisterSMSGateway: the gateway's session ends (its sesskey answers INVALID_SESSKEY). */
  async unregister(gateway: GatewayPrincipal) {
    await this.stamps.write(({ trx }) =>
      trx.from(TABLE).where('id', gateway.id).update({
        key_hash: null,
        session_book_owner: null,
        session_book_code: null,
      })
    )
    this.touched.delete(gateway.id)
    this.sockets.end(gateway.id)
  }

  /** A gateway attached to the kernel's WebSocket with its sesskey: fed its outbound SMS. */
  async attachSocket(gateway: GatewayPrincipal, socket: GatewaySocket) {
    return this.sockets.attach(gateway, socket)
  }

  /**
   * An administrator allows a number (gateway:allow, the console), fixing its
   * book or not (allowing again without a book frees it). A pending
   * registration becomes allowed: the phone registers again to get its sesskey.
   */
  async allow(rawPhone: string, book: BookPair | null, by: AuditActor = SYSTEM_ACTOR) {
    const phone = this.phoneOf(rawPhone, 'phone')
    if (book && !(await this.books.resolve(book.b_o, book.b_c))) {
      throw rpcError('NOT_FOUND', `Book not found: ${book.b_o}/${book.b_c}`)
    }
    const allowed = {
      allowed: true,
      allowed_at: dbTimestamp(),
      book_owner: book?.b_o ?? null,
      book_code: book?.b_c ?? null,
    }
    await this.stamps.write(async ({ trx }) => {
      const before = await trx.from(TABLE).where('phone', phone).first()
      const updated = await trx.from(TABLE).where('phone', phone).update(allowed)
      if (Number(updated) === 0)
        await trx.table(TABLE).insert({ phone, created_at: dbTimestamp(), ...allowed })
      const bookOf = (row: any) => (row?.book_code ? `${row.book_owner}/${row.book_code}` : null)
      await this.audit.record(
        {
          actor: by,
          kind: 'gateway.allowed',
          target: { type: 'gateway', id: before?.id ?? null, label: phone },
          changes: {
            allowed: { from: Boolean(before?.allowed), to: true },
            book: { from: bookOf(before), to: bookOf(allowed) },
          },
        },
        trx
      )
    })
    return { phone, book }
  }

  /**
   * An allowed gateway by id, as authenticate() answers it (null once it is
   * no longer allowed): a phone of the Android app tied to it acts as it.
   */
  async byId(id: number): Promise<SmsGateway | null> {
    const row = await db.from(TABLE).where('id', id).where('allowed', true).first()
    return row ? gatewayOf(row) : null
  }

  /** A gateway's row by number (the console and the command show it). */
  async find(rawPhone: string) {
    const phone = this.phoneOf(rawPhone, 'phone')
    return (await db.from(TABLE).where('phone', phone).first()) ?? null
  }

  /**
   * The gateway whose sesskey this is, with its number as o_u: the kernel's
   * dispatcher calls this for every request made with a gateway's sesskey.
   */
  async authenticate(credentials: Credentials): Promise<SmsGateway> {
    if (!isGatewaySesskey(credentials.sesskey)) {
      throw rpcError(
        'INVALID_SESSKEY',
        "Invalid sesskey: not an SMS gateway's (registerSMSGateway)"
      )
    }
    const row = await db
      .from(TABLE)
      .where('key_hash', hashKey(credentials.sesskey))
      .where('allowed', true)
      .first()
    if (!row) throw rpcError('INVALID_SESSKEY', 'Invalid sesskey: unknown or ended gateway session')
    if (toE164(credentials.o_u, gatewaysConfig.defaultRegion) !== row.phone) {
      throw rpcError('USER_MISMATCH', 'o_u is not the number of this gateway', {
        process: 'invalid o_u',
      })
    }
    await this.limits.gateway(row.phone)
    this.touch(Number(row.id))
    return gatewayOf(row)
  }

  /** Records the gateway's last use, at most once a minute (never in the request's way). */
  private touch(id: number) {
    const now = Date.now()
    if (now - (this.touched.get(id) ?? 0) < TOUCH_INTERVAL_MS) return
    this.touched.set(id, now)
    void db
      .from(TABLE)
      .where('id', id)
      .update({ last_used_at: dbTimestamp() })
      .catch(() => {})
  }

  /**
   * The actor of a gateway's message: the user whose mob1 or mob2 is the
   * sender's number (u_c), restricted to the gateway's book when it has one.
   */
  async actorFor(gateway: GatewayPrincipal, credentials: Credentials): Promise<Actor> {
    const phone = this.phoneOf(credentials.u_c, 'u_c')
    await this.limits.sender(phone)
    const sender = await this.senderOf(phone)
    const book = (gateway as SmsGateway).book
    return {
      user: sender,
      principal: sender,
      // A gateway holds no user session: nothing of a session is read for it.
      session: null as unknown as ApiSession,
      restrictions: book
        ? { ...NO_RESTRICTIONS, carnet_owner: book.b_o, carnet_code: book.b_c }
        : { ...NO_RESTRICTIONS },
      onBehalf: false,
    }
  }

  /** The one user owning this number: mob1 first (a login, unique), then mob2. */
  private async senderOf(phone: string): Promise<User> {
    const forms = phoneForms(phone)
    const region = gatewaysConfig.defaultRegion
    for (const field of ['mob1', 'mob2'] as const) {
      const candidates = await this.users.findByPhoneForms(forms, field)
      const owners = candidates.filter(
        (user) =>
          toE164(field === 'mob1' ? user.phone : String(user.prefs?.mob2 ?? ''), region) === phone
      )
      if (owners.length > 1) {
        throw rpcError(
          'GATEWAY_UNKNOWN_SENDER',
          `Several users have ${phone} as ${field}: the sender is ambiguous`
        )
      }
      const [owner] = owners
      if (owner?.disabledAt) throw rpcError('FORBIDDEN', `The account of ${phone} is disabled`)
      if (owner) return owner
    }
    throw rpcError('GATEWAY_UNKNOWN_SENDER', `No user has the number ${phone} (mob1 or mob2)`)
  }
}
