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

const DEVICES = 'gateways_push_devices'
const TITLE_LENGTH = 100

/** What a push delivery's row carries: enough to build any provider's request. */
export interface PushPayload {
  userId: number
  deviceId: number
  bookId: number
  b_o: string
  b_c: string
  /** The book's title (ownerPrefs.title, else its code). */
  title: string
  smid: number
  uuid: string
  /** The sender's code; null when the book is confidential. */
  u_c: string | null
  /** The message's text, cut; null when the book is confidential (notifyMobileConfidential). */
  text: string | null
}

/** What one provider request came to, in the outbox's terms, and whether the device is gone. */
interface Outcome extends AttemptResult {
  gone?: boolean
}

const cut = (text: string, length: number) =>
  text.length > length ? `${text.slice(0, length - 1)}…` : text

/** Notifications of one book replace each other on the device (collapse key, thread id). */
const collapseKey = (bookId: number) => `book-${bookId}`

/**
 * Push deliveries of new messages (issue 19 item 4), through the kernel
 * outbox: staged in the message's own transaction (books' in-transaction
 * topic `books:message_changed`, the one webhooks use), one delivery per
 * active device of each accepted member concerned, sent by the `push_fcm`
 * or `push_apns` channel after commit.
 */
export class PushDeliveryService {
  constructor(readonly providers: PushProviders = new PushProviders()) {}

  /** The contribution to books' in-transaction topic. */
  messageContributor(): OutboxContributor<MessageChanging> {
    return {
      // The writer asks with {bookId} alone first: a kind not yet known may be 'created'.
      wants: (event) =>
        (event.kind === undefined || event.kind === 'created') &&
        this.providers.servedTypes().length > 0,
      entries: (event, client) => this.entriesFor(event, client),
    }
  }

  /**
   * Inside the message's transaction: a delivery per active device (of a
   * type a configured provider serves) of each accepted member, except the
   * sender, whose book userPrefs ask for mobile notifications (notifyMobile;
   * in an archived book only with notifyWhenMsgInArchivedBook).
   */
  async entriesFor(event: MessageChanging, client: QueryClientContract): Promise<OutboxEntry[]> {
    if (event.kind !== 'created' || event.row.del) return []
    const types = this.providers.servedTypes()
    if (types.length === 0) return []
    const senders = [event.actorId, Number(event.row.creator_id), event.onBehalfOf].filter(
      (id): id is number => typeof id === 'number' && id > 0
    )
    const rows = await client
      .from('book_members as m')
      .join(`${DEVICES} as d`, 'd.user_id', 'm.user_id')
      .where('m.book_id', event.bookId)
      .where('m.invite', 'accepted')
      .where('m.del', false)
      .where('d.active', true)
      .whereNotIn('m.user_id', senders)
      .select('m.user_id', 'm.user_prefs', 'd.id as device_id', 'd.device_type')
      .orderBy('d.id')
    // The common case, a book where no member has a device, ends here: one indexed query.
    if (rows.length === 0) return []
    const book = await client
      .from('books')
      .where('id', event.bookId)
      .select('owner_prefs', 'archived')
      .first()
    if (!book) return []
    const ownerPrefs = typedPrefs(
      OWNER_PREF_KINDS,
      OWNER_PREF_DEFAULTS,
      parseJson(book.owner_prefs, null)
    )
    const confidential = ownerPrefs.notifyMobileConfidential === true
    const archived = Boolean(Number(book.archived))
    const sender = confidential
      ? null
      : await client.from('users').where('id', event.row.creator_id).select('code').first()
    const base = {
      bookId: event.bookId,
      b_o: event.b_o,
      b_c: event.b_c,
      title: cut(String(ownerPrefs.title || event.b_c), TITLE_LENGTH),
      smid: Number(event.row.smid),
      uuid: event.row.uuid,
      u_c: sender ? String(sender.code) : null,
      text: confidential ? null : cut(event.row.msg ?? '', gatewaysConfig.pushTextLength),
    }
    const entries: OutboxEntry[] = []
    let unsupported = 0
    for (const row of rows) {
      const prefs = typedPrefs(USER_PREF_KINDS, USER_PREF_DEFAULTS, parseJson(row.user_prefs, null))
      if (prefs.notifyMobile !== true) continue
      if (archived && prefs.notifyWhenMsgInArchivedBook !== true) continue
      const type = row.device_type as DeviceType
      if (!types.includes(type)) {
        unsupported++
        continue
      }
      const provider = PROVIDER_OF[type] as Provider
      const deviceId = Number(row.device_id)
      const payload: PushPayload = { ...base, userId: Number(row.user_id), deviceId }
      entries.push({
        channel: CHANNEL_OF[provider],
        recipient: `device:${deviceId}`,
        idempotencyKey: `message:${base.smid}:device:${deviceId}`,
        // One device's notifications of one book go one after the other, so a burst collapses.
        orderKey: `push:${deviceId}:${event.bookId}`,
        eventType: 'message.created',
        payload,
      })
    }
    if (unsupported)
      logger.debug(
        { smid: base.smid, devices: unsupported },
        'push: devices of unsupported types skipped (see PushDeliveryService.unsupportedDevices)'
      )
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

  /** The `push_fcm` and `push_apns` outbox channels. */
  channel(provider: Provider): OutboxChannel {
    return { send: (delivery) => this.send(provider, delivery) }
  }

  private async send(provider: Provider, delivery: OutboxDelivery): Promise<AttemptResult> {
    const payload = delivery.payload as PushPayload
    const device = await db.from(DEVICES).where('id', payload.deviceId).first()
    if (!device || !device.active || Number(device.user_id) !== payload.userId)
      return { outcome: 'cancelled', error: 'the device is gone, inactive or now another user’s' }
    if (await this.superseded(delivery))
      return { outcome: 'cancelled', error: 'collapsed: a newer message of the book follows' }
    const token = String(device.registration_id)
    const outcome =
      provider === 'fcm' ? await this.sendFcm(payload, token) : await this.sendApns(payload, token)
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

  /** A newer delivery of the same device and book waits: this one would be replaced at once. */
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

  private async sendFcm(payload: PushPayload, token: string): Promise<Outcome> {
    const client = this.providers.fcm()
    if (!client) return { outcome: 'retry', error: 'FCM is not configured' }
    const collapse = collapseKey(payload.bookId)
    const answer = await client.send({
      token,
      notification: { title: payload.title, body: payload.text ?? 'New message' },
      // FCM data values are strings.
      data: {
        type: 'message',
        b_o: payload.b_o,
        b_c: payload.b_c,
        smid: String(payload.smid),
        uuid: payload.uuid,
        ...(payload.u_c === null ? {} : { u_c: payload.u_c }),
      },
      android: { collapse_key: collapse, priority: 'HIGH', notification: { tag: collapse } },
      apns: {
        headers: { 'apns-collapse-id': collapse },
        payload: { aps: { 'thread-id': collapse } },
      },
    })
    const result = { status: answer.status, response: answer.response, error: answer.code }
    const status = answer.status
    if (status !== null && status >= 200 && status < 300)
      return { ...result, outcome: 'delivered', error: null }
    if (answer.code === 'UNREGISTERED' || answer.code === 'SENDER_ID_MISMATCH' || status === 404)
      return { ...result, outcome: 'failed', gone: true }
    if (status === 401) {
      client.dropToken()
      return { ...result, outcome: 'retry' }
    }
    if (status === null || status === 429 || status >= 500) return { ...result, outcome: 'retry' }
    return { ...result, outcome: 'failed' }
  }

  private async sendApns(payload: PushPayload, token: string): Promise<Outcome> {
    const client = this.providers.apns()
    if (!client) return { outcome: 'retry', error: 'APNs is not configured' }
    const collapse = collapseKey(payload.bookId)
    const answer = await client.send({
      deviceToken: token,
      collapseId: collapse,
      payload: {
        aps: {
          'alert': { title: payload.title, body: payload.text ?? 'New message' },
          'sound': 'default',
          'thread-id': collapse,
        },
        b_o: payload.b_o,
        b_c: payload.b_c,
        smid: payload.smid,
        uuid: payload.uuid,
        ...(payload.u_c === null ? {} : { u_c: payload.u_c }),
      },
    })
    const result = { status: answer.status, response: answer.response, error: answer.reason }
    const status = answer.status
    if (status === 200) return { ...result, outcome: 'delivered', error: null }
    if (
      status === 410 ||
      answer.reason === 'BadDeviceToken' ||
      answer.reason === 'DeviceTokenNotForTopic'
    )
      return { ...result, outcome: 'failed', gone: true }
    if (answer.reason === 'ExpiredProviderToken' || answer.reason === 'InvalidProviderToken') {
      client.dropToken()
      return { ...result, outcome: 'retry' }
    }
    if (status === null || status === 429 || status >= 500) return { ...result, outcome: 'retry' }
    return { ...result, outcome: 'failed' }
  }
}
