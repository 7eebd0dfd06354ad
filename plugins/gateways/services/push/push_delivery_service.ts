import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type {
  AttemptResult,
  OutboxChannel,
  OutboxContributor,
  OutboxDelivery,
  OutboxEntry,
} from '#core/outbox/types'
import { hashKey } from '#core/auth/keys'
import { dbTimestamp } from '#core/db_time'
import { readQuery } from '#core/native_sql'
import type { MessageChanging } from '#plugins/books/events'
import {
  OWNER_PREF_DEFAULTS,
  OWNER_PREF_KINDS,
  USER_PREF_DEFAULTS,
  USER_PREF_KINDS,
  parseJson,
  typedPrefs,
} from '#plugins/books/models/prefs'
import gatewaysConfig from '../../config.js'
import type { DeviceType } from '../push_device_service.js'
import { CHANNEL_OF, PROVIDER_OF, PushProviders, type Provider } from './push_providers.js'
import { sendApns, sendFcm, sendWebPush, type Outcome } from './provider_senders.js'

const DEVICES = 'gateways_push_devices'
const TITLE_LENGTH = 100

/**
 * A notification for some users (contract 3 of issue 19: messages,
 * invitations, comments here; reminders from the mail-out helper's
 * reminders service).
 */
export interface PushNotification {
  userIds: number[]
  /** The book it is about: its members' prefs and its confidentiality apply. */
  bookId?: number | null
  title: string
  body: string
  /** Identifiers for the app (b_o, b_c, smid, ...): no content, it is kept when confidential. */
  data: Record<string, string>
  /** Notifications sharing it replace each other on the device (`book-<id>` for a book's). */
  collapseKey: string
  eventType: string
  /** Unique per notification; each device's delivery adds `:device:<id>`. */
  idempotencyKey: string
  /** Not sent before (epoch ms): a reminder. */
  notBefore?: number
  /** No text: the body becomes a neutral phrase, the title the book's, data loses `u_c`. */
  confidential?: boolean
}

/** What a push delivery's row carries: enough to build any provider's request. */
export interface PushPayload {
  userId: number
  deviceId: number
  title: string
  body: string
  data: Record<string, string>
  collapseKey: string
}

/** A device met in a fan-out, with its owner's book userPrefs when the notification has a book. */
interface DeviceRow {
  user_id: number | string
  device_id: number | string
  device_type: string
  user_prefs?: string | null
}

export interface BookContext {
  title: string
  archived: boolean
  confidential: boolean
}

/** What a confidential notification says instead of its text, by event type, else its family. */
const NEUTRAL_BODY: Record<string, string> = {
  'message': 'New message',
  'invitation': 'New invitation',
  'comment': 'New comment',
  'event.reminder': 'Reminder',
}

export const cut = (text: string, length: number) =>
  text.length > length ? `${text.slice(0, length - 1)}…` : text

/** Notifications of one book replace each other on the device (collapse key, thread id, topic). */
export const bookCollapseKey = (bookId: number) => `book-${bookId}`

/** A book's title as notifications show it (ownerPrefs.title, else its code). */
export const bookTitle = (ownerPrefs: Record<string, unknown>, b_c: string) =>
  cut(String(ownerPrefs.title || b_c), TITLE_LENGTH)

/**
 * Push deliveries through the kernel outbox: staged in the transaction of
 * the change that causes them, one delivery per active device (of a type a
 * configured provider serves) of each user concerned, sent after commit by
 * the `push_fcm`, `push_apns` or `push_web` channel.
 */
export class PushDeliveryService {
  constructor(readonly providers: PushProviders = new PushProviders()) {}

  /** Whether any provider is configured (contributors skip all work when none is). */
  enabled() {
    return this.providers.servedTypes().length > 0
  }

  /** The contribution to books' in-transaction topic: new messages. */
  messageContributor(): OutboxContributor<MessageChanging> {
    return {
      // The writer asks with {bookId} alone first: a kind not yet known may be 'created'.
      wants: (event) => (event.kind === undefined || event.kind === 'created') && this.enabled(),
      mayStage: async (event) =>
        event.bookId === undefined || (await this.bookHasDevices(event.bookId)),
      entries: (event, client) => this.messageEntries(event, client),
    }
  }

  /**
   * Whether an accepted member of the book has an active device of a served type (committed
   * data). Asked before every new message's batch when a provider is configured: a plain
   * statement (readQuery: on SQLite the read connection, prepared once), where a knex query was
   * prepared again each time and, on SQLite, waited for the write connection that batches of
   * messages hold (bench:gateways, sendMsg with e-mail copies, which stage in a transaction).
   */
  private async bookHasDevices(bookId: number) {
    const types = this.providers.servedTypes()
    if (types.length === 0) return false
    const [device] = await readQuery(
      `SELECT d.id FROM book_members m JOIN ${DEVICES} d ON d.user_id = m.user_id` +
        ` WHERE m.book_id = ? AND m.invite = 'accepted' AND m.del = ? AND d.active = ?` +
        ` AND d.device_type IN (${types.map(() => '?').join(', ')}) LIMIT 1`,
      [bookId, false, true, ...types]
    )
    return Boolean(device)
  }

  /**
   * A new message: every accepted member except the sender (the user the
   * message is written as, its creator, the sesskey holder acting on behalf).
   * Members and their devices are read in one query, once per transaction
   * and book (bookDevices).
   */
  async messageEntries(event: MessageChanging, client: QueryClientContract) {
    if (event.kind !== 'created' || event.row.del) return []
    const types = this.providers.servedTypes()
    if (types.length === 0) return []
    const senders = new Set(
      [event.actorId, Number(event.row.creator_id), event.onBehalfOf].filter(
        (id): id is number => typeof id === 'number' && id > 0
      )
    )
    const { devices: all, book } = await this.bookDevices(client, event.bookId, types)
    const devices = all.filter((device) => !senders.has(Number(device.user_id)))
    if (devices.length === 0 || !book) return []
    const [sender] = book.confidential
      ? []
      : await readQuery('SELECT code FROM users WHERE id = ?', [event.row.creator_id], client)
    const smid = Number(event.row.smid)
    return this.fanOut(
      devices,
      {
        userIds: [],
        bookId: event.bookId,
        title: book.title,
        body: event.row.msg ?? '',
        data: {
          type: 'message',
          b_o: event.b_o,
          b_c: event.b_c,
          smid: String(smid),
          uuid: event.row.uuid,
          ...(sender ? { u_c: String(sender.code) } : {}),
        },
        collapseKey: bookCollapseKey(event.bookId),
        eventType: 'message.created',
        idempotencyKey: `message:${smid}`,
      },
      book
    )
  }

  /**
   * Contract 3: the deliveries of a notification, one per active device of
   * the users, on every configured provider. With a book, each user's book
   * userPrefs apply (notifyMobile; in an archived book
   * notifyWhenMsgInArchivedBook; a user with no member row has the
   * defaults) and the book's notifyMobileConfidential makes it confidential.
   * Callers leave the actor out of userIds.
   */
  async entriesForUsers(
    client: QueryClientContract,
    notification: PushNotification
  ): Promise<OutboxEntry[]> {
    const types = this.providers.servedTypes()
    const userIds = [...new Set(notification.userIds)].filter((id) => id > 0)
    if (types.length === 0 || userIds.length === 0) return []
    const bookId = notification.bookId ?? null
    const query = client
      .from(`${DEVICES} as d`)
      .whereIn('d.user_id', userIds)
      .where('d.active', true)
      .whereIn('d.device_type', types)
      .select('d.user_id', 'd.id as device_id', 'd.device_type')
      .orderBy('d.id')
    if (bookId !== null)
      query
        .leftJoin('book_members as m', (join) =>
          join.on('m.user_id', 'd.user_id').andOnVal('m.book_id', bookId)
        )
        .select('m.user_prefs')
    const devices: DeviceRow[] = await query
    if (devices.length === 0) return []
    const book = bookId === null ? null : await this.bookContext(client, bookId)
    if (bookId !== null && !book) return []
    return this.fanOut(devices, notification, book)
  }

  /**
   * The book's member devices of the served types and its context, read once per transaction
   * and book: the sends of a staged batch share one transaction (books' group commit), and each
   * message leaves its own senders out here, not in a statement of its own (as the copies
   * contributor reads the members once). Plain statements, in the message's transaction.
   */
  private bookDevices(
    client: QueryClientContract,
    bookId: number,
    types: string[]
  ): Promise<{ devices: DeviceRow[]; book: BookContext | null }> {
    const read = async () => {
      const devices = (await readQuery(
        `SELECT m.user_id, m.user_prefs, d.id AS device_id, d.device_type` +
          ` FROM book_members m JOIN ${DEVICES} d ON d.user_id = m.user_id` +
          ` WHERE m.book_id = ? AND m.invite = 'accepted' AND m.del = ? AND d.active = ?` +
          ` AND d.device_type IN (${types.map(() => '?').join(', ')}) ORDER BY d.id`,
        [bookId, false, true, ...types],
        client
      )) as DeviceRow[]
      // The common case, a book where nobody has a device, ends here.
      return { devices, book: devices.length ? await this.bookContext(client, bookId) : null }
    }
    // Only a transaction's view is kept (and only as long as the transaction object lives).
    if (!client.isTransaction) return read()
    let byBook = this.devicesByTransaction.get(client)
    if (!byBook) this.devicesByTransaction.set(client, (byBook = new Map()))
    let found = byBook.get(bookId)
    if (!found) byBook.set(bookId, (found = read()))
    return found
  }

  private devicesByTransaction = new WeakMap<
    QueryClientContract,
    Map<number, Promise<{ devices: DeviceRow[]; book: BookContext | null }>>
  >()

  /** What a book changes in its notifications: the title shown, archived, confidential. */
  async bookContext(client: QueryClientContract, bookId: number): Promise<BookContext | null> {
    const [book] = await readQuery(
      'SELECT code, owner_prefs, archived FROM books WHERE id = ?',
      [bookId],
      client
    )
    if (!book) return null
    const ownerPrefs = typedPrefs(
      OWNER_PREF_KINDS,
      OWNER_PREF_DEFAULTS,
      parseJson(book.owner_prefs, null)
    )
    return {
      title: bookTitle(ownerPrefs, String(book.code)),
      archived: Boolean(Number(book.archived)),
      confidential: ownerPrefs.notifyMobileConfidential === true,
    }
  }

  /** The book's prefs and confidentiality applied, an entry per device left. */
  private fanOut(
    devices: DeviceRow[],
    notification: PushNotification,
    book: BookContext | null
  ): OutboxEntry[] {
    let { title, data } = notification
    let body = cut(notification.body, gatewaysConfig.pushTextLength)
    const confidential = notification.confidential === true || book?.confidential === true
    if (confidential) {
      if (book) title = book.title
      const { eventType } = notification
      body = NEUTRAL_BODY[eventType] ?? NEUTRAL_BODY[eventType.split('.')[0]] ?? 'New activity'
      const { u_c: sender, ...rest } = data
      data = rest
    }
    const base = {
      title: cut(title, TITLE_LENGTH),
      body,
      data,
      collapseKey: notification.collapseKey,
    }
    const entries: OutboxEntry[] = []
    for (const device of devices) {
      if (book) {
        const prefs = typedPrefs(
          USER_PREF_KINDS,
          USER_PREF_DEFAULTS,
          parseJson(device.user_prefs ?? null, null)
        )
        if (prefs.notifyMobile !== true) continue
        if (book.archived && prefs.notifyWhenMsgInArchivedBook !== true) continue
      }
      const provider = PROVIDER_OF[device.device_type as DeviceType] as Provider
      const deviceId = Number(device.device_id)
      const payload: PushPayload = { ...base, userId: Number(device.user_id), deviceId }
      entries.push({
        channel: CHANNEL_OF[provider],
        recipient: `device:${deviceId}`,
        idempotencyKey: `${notification.idempotencyKey}:device:${deviceId}`,
        // A device's notifications of one key go one after the other, so a burst collapses; a
        // scheduled one (a reminder) has no order key: waiting for its time, it would hold the rest.
        orderKey:
          notification.notBefore === undefined
            ? `push:${deviceId}:${notification.collapseKey}`
            : null,
        eventType: notification.eventType,
        payload,
        ...(notification.notBefore === undefined ? {} : { notBefore: notification.notBefore }),
      })
    }
    if (entries.length === 0)
      logger.debug({ eventType: notification.eventType }, 'push: no device wants it')
    return entries
  }

  /**
   * Active devices no configured provider can reach: their type has no
   * provider any more (bb_dt, win_uri), or its provider is not configured
   * here. Stored, never sent to: the console lists them from this.
   */
  async unsupportedDevices(options: { offset?: number; limit?: number } = {}) {
    const served = this.providers.servedTypes()
    const rows = await db
      .from(DEVICES)
      .where('active', true)
      .whereNotIn('device_type', served.length ? served : [''])
      .orderBy('id')
      .offset(options.offset ?? 0)
      .limit(options.limit ?? 100)
      .select('id', 'user_id', 'device_type', 'updated_at')
    return rows.map((row) => {
      const provider = PROVIDER_OF[row.device_type as DeviceType]
      return {
        deviceId: Number(row.id),
        userId: Number(row.user_id),
        deviceType: row.device_type as DeviceType,
        reason: provider
          ? `${provider.toUpperCase()} is not configured on this server`
          : `no push provider exists for ${row.device_type}`,
      }
    })
  }

  /** The `push_fcm`, `push_apns` and `push_web` outbox channels. */
  channel(provider: Provider): OutboxChannel {
    return { send: (delivery) => this.send(provider, delivery) }
  }

  private async send(provider: Provider, delivery: OutboxDelivery): Promise<AttemptResult> {
    const payload = delivery.payload as PushPayload
    const device = await db.from(DEVICES).where('id', payload.deviceId).first()
    if (!device || !device.active || Number(device.user_id) !== payload.userId)
      return { outcome: 'cancelled', error: 'the device is gone, inactive or now another user’s' }
    if (await this.superseded(delivery))
      return { outcome: 'cancelled', error: 'collapsed: a newer notification follows' }
    const token = String(device.registration_id)
    const outcome = await this.sendWith(provider, payload, token)
    if (outcome.gone) {
      // Only the token the provider refused: a device that changed its token meanwhile stays active.
      await db
        .from(DEVICES)
        .where('id', payload.deviceId)
        .where('registration_hash', hashKey(token))
        .update({ active: false, updated_at: dbTimestamp() })
    }
    const { gone, ...result } = outcome
    return result
  }

  private async sendWith(
    provider: Provider,
    payload: PushPayload,
    token: string
  ): Promise<Outcome> {
    const notConfigured = { outcome: 'retry' as const, error: `${provider} is not configured` }
    if (provider === 'fcm') {
      const client = this.providers.fcm()
      return client ? sendFcm(client, payload, token) : notConfigured
    }
    if (provider === 'apns') {
      const client = this.providers.apns()
      return client ? sendApns(client, payload, token) : notConfigured
    }
    const client = this.providers.webPush()
    return client ? sendWebPush(client, payload, token) : notConfigured
  }

  /** A newer delivery of the same device and collapse key waits: this one would be replaced at once. */
  private async superseded(delivery: OutboxDelivery) {
    if (!delivery.orderKey) return false
    const newer = await db
      .from('outbox_deliveries')
      .where('order_key', delivery.orderKey)
      .where('id', '>', delivery.id)
      .where('state', 'pending')
      .select('id')
      .first()
    return !!newer
  }
}
