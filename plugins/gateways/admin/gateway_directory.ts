import db from '@adonisjs/lucid/services/db'
import { readPage, whereContains, type PageRequest } from '#core/paging'
import { TABLES } from '#plugins/books/models/records'

const GATEWAYS = 'gateways_sms'
const DEVICES = 'gateways_push_devices'
/** What a gateway's page shows of the SMS messages stored in its book. */
const RECENT_MESSAGES = 10

/** A stored timestamp (a Date on MySQL, text on SQLite) as ISO text; null stays null. */
export const isoTime = (value: unknown) => (value ? new Date(value as string).toISOString() : null)

const bookOf = (owner: unknown, code: unknown) =>
  owner && code ? `${String(owner)}/${String(code)}` : null

/** A gateways_sms row as the console shows it (never its key hash). */
function gatewayView(row: any) {
  return {
    id: Number(row.id),
    phone: row.phone as string,
    allowed: Boolean(Number(row.allowed)),
    registered: row.key_hash !== null,
    appname: row.appname as string,
    fixedBook: bookOf(row.book_owner, row.book_code),
    requestedBook: bookOf(row.requested_book_owner, row.requested_book_code),
    sessionBook: bookOf(row.session_book_owner, row.session_book_code),
    requestedFrom: (row.requested_ip as string | null) ?? null,
    requestedAt: isoTime(row.requested_at),
    allowedAt: isoTime(row.allowed_at),
    registeredAt: isoTime(row.registered_at),
    lastUsedAt: isoTime(row.last_used_at),
  }
}

export type GatewayView = ReturnType<typeof gatewayView>

/**
 * Read-only listings of the gateways plugin for the console: SMS gateways
 * (pending ones first), push devices with their owners, and the SMS messages
 * stored in a gateway's book. Writes go through the plugin's services.
 */
export class GatewayDirectory {
  /** Every gateway, pending registrations first, then the most recently asked; searched by number or app. */
  gateways(request: PageRequest) {
    const query = whereContains(db.from(GATEWAYS), request.search, ['phone', 'appname'])
    return readPage(
      query,
      request,
      (page) =>
        page
          .orderBy('allowed', 'asc')
          .orderByRaw('COALESCE(requested_at, created_at) DESC')
          .orderBy('id', 'desc')
          .select('*'),
      gatewayView
    )
  }

  async gateway(id: number): Promise<GatewayView | null> {
    const row = await db.from(GATEWAYS).where('id', id).first()
    return row ? gatewayView(row) : null
  }

  /**
   * The latest SMS messages (msgMethod `_sms`) stored in a book, newest first:
   * what a gateway with that book forwarded (messages do not record which
   * gateway brought them, so in a book several gateways serve, all show).
   */
  async smsMessagesOf(book: string | null) {
    if (!book) return []
    const [owner, code] = book.split('/')
    const rows = await db
      .from(`${TABLES.messages} as m`)
      .join(`${TABLES.books} as b`, 'b.id', 'm.book_id')
      .join('users as o', 'o.id', 'b.owner_id')
      .join('users as u', 'u.id', 'm.creator_id')
      .where('o.code', owner)
      .where('b.code', code)
      .where('b.del', false)
      .where('m.msg_method', '_sms')
      .where('m.del', false)
      .orderBy('m.smid', 'desc')
      .limit(RECENT_MESSAGES)
      .select('m.smid', 'm.msg', 'm.created', 'u.code as sender')
    return rows.map((row) => ({
      smid: Number(row.smid),
      sender: row.sender as string,
      text: String(row.msg ?? '').slice(0, 300),
      created: Number(row.created),
    }))
  }

  /** Push devices with their owner, newest first; searched by the owner's code or e-mail, or the type. */
  devices(request: PageRequest) {
    const query = whereContains(
      db.from(`${DEVICES} as d`).join('users as u', 'u.id', 'd.user_id'),
      request.search,
      ['u.code', 'u.email', 'd.device_type']
    )
    return readPage(
      query,
      request,
      (page) =>
        page
          .orderBy('d.id', 'desc')
          .select(
            'd.id',
            'd.user_id',
            'd.device_type',
            'd.registration_id',
            'd.active',
            'd.updated_at',
            'u.code as user_code'
          ),
      (row) => ({
        id: Number(row.id),
        userId: Number(row.user_id),
        user: row.user_code as string,
        deviceType: row.device_type as string,
        // The token's ends are enough to tell devices apart; the whole token is a credential.
        token: tokenHint(String(row.registration_id)),
        active: Boolean(Number(row.active)),
        updatedAt: isoTime(row.updated_at),
      })
    )
  }

  /** The owner of a device (the console deactivates it as that user), or null. */
  async deviceOwner(id: number): Promise<number | null> {
    const row = await db.from(DEVICES).where('id', id).select('user_id').first()
    return row ? Number(row.user_id) : null
  }
}

function tokenHint(token: string) {
  return token.length <= 16 ? token : `${token.slice(0, 8)}…${token.slice(-6)}`
}
