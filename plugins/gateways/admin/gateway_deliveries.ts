import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import { OutboxService } from '#core/outbox/outbox_service'
import type { DeliveryState } from '#core/outbox/types'
import { readPage, whereContains, type PageRequest } from '#core/paging'
import { MAIL_CHANNEL } from '../services/mail_out/mail_out_service.js'
import { CHANNEL_OF } from '../services/push/push_providers.js'
import { ALARM_CHANNEL, REMINDER_CHANNEL } from '../services/reminders/reminder_service.js'

const DELIVERIES = 'outbox_deliveries'

const COLUMNS = [
  'id',
  'channel',
  'recipient',
  'event_type',
  'payload',
  'state',
  'attempts',
  'max_attempts',
  'next_attempt_at',
  'last_status',
  'last_error',
  'created_at',
  'finished_at',
]

/**
 * The outbox channels the gateways plugin sends through (webhooks have their
 * own): push, e-mail, and the event reminders (a due reminder fans out to
 * those, and to the web alarm).
 */
export const GATEWAY_CHANNELS: string[] = [
  ...Object.values(CHANNEL_OF),
  MAIL_CHANNEL,
  REMINDER_CHANNEL,
  ALARM_CHANNEL,
]

export const DELIVERY_STATES: DeliveryState[] = [
  'pending',
  'sending',
  'delivered',
  'failed',
  'cancelled',
]

export interface DeliveryFilter extends PageRequest {
  channel?: string
  state?: DeliveryState
}

/**
 * What a delivery is about, from its payload, without what it says: a push's
 * book and device, a mail's address and subject. A confidential book's text
 * never reaches the payload in the first place.
 */
function aboutOf(payload: string): string {
  let parsed: Record<string, any>
  try {
    parsed = JSON.parse(payload) ?? {}
  } catch {
    return ''
  }
  const parts: string[] = []
  if (typeof parsed.to === 'string') parts.push(`to ${parsed.to}`)
  if (typeof parsed.subject === 'string') parts.push(`“${parsed.subject.slice(0, 80)}”`)
  // A push payload names its book at its top, or in the data it hands the app.
  const book = typeof parsed.b_o === 'string' ? parsed : (parsed.data ?? {})
  if (typeof book.b_o === 'string' && typeof book.b_c === 'string')
    parts.push(`book ${book.b_o}/${book.b_c}`)
  return parts.join(' · ')
}

/** A push device's type in plain words (updatePushId's deviceType). */
const DEVICE_WORDS: Record<string, string> = {
  gcm_rid: 'Android phone',
  gcm_nk: 'Android device group',
  ios_dt: 'iPhone',
  ios_dt_v2: 'iPhone',
  bb_dt: 'BlackBerry',
  win_uri: 'Windows Phone',
  web_push: 'web browser',
}

const personOf = (row: { first_name?: string | null; last_name?: string | null; code: string }) => {
  const name = `${row.first_name ?? ''} ${row.last_name ?? ''}`.trim()
  return name ? `${name} (${row.code})` : row.code
}

/**
 * Who a delivery goes to, in words: the outbox records `device:<id>` (a push), `user:<id>` (a
 * web alarm), `message:<id>` (a due reminder, fanned out later) or an e-mail address. Devices
 * and users of a page are read in one query each.
 */
async function recipientsInWords(recipients: string[]): Promise<Map<string, string>> {
  const ids = (prefix: string) => [
    ...new Set(
      recipients
        .filter((recipient) => recipient.startsWith(prefix))
        .map((recipient) => Number(recipient.slice(prefix.length)))
        .filter((id) => Number.isSafeInteger(id))
    ),
  ]
  const deviceIds = ids('device:')
  const userIds = ids('user:')
  const devices = deviceIds.length
    ? await db
        .from('gateways_push_devices as d')
        .join('users as u', 'u.id', 'd.user_id')
        .whereIn('d.id', deviceIds)
        .select('d.id', 'd.device_type', 'u.code', 'u.first_name', 'u.last_name')
    : []
  const users = userIds.length
    ? await db.from('users').whereIn('id', userIds).select('id', 'code', 'first_name', 'last_name')
    : []
  const words = new Map<string, string>()
  for (const device of devices)
    words.set(
      `device:${device.id}`,
      `${DEVICE_WORDS[device.device_type] ?? 'Device'} of ${personOf(device)}`
    )
  for (const user of users) words.set(`user:${user.id}`, `${personOf(user)}, in the web app`)
  for (const recipient of recipients) {
    if (words.has(recipient)) continue
    if (recipient.startsWith('device:')) words.set(recipient, 'A device no longer registered')
    else if (recipient.startsWith('user:')) words.set(recipient, 'A deleted user')
    else if (recipient.startsWith('message:'))
      words.set(recipient, 'The people the reminder of a message is for')
    else words.set(recipient, recipient)
  }
  return words
}

const epoch = (value: unknown) => (value === null || value === undefined ? null : Number(value))

/** A delivery row as the console shows it. */
function deliveryView(row: any) {
  return {
    id: Number(row.id),
    channel: row.channel as string,
    recipient: row.recipient as string,
    /** `recipient` in words (recipientsInWords); the raw value is what the search matches. */
    to: row.recipient as string,
    eventType: row.event_type as string,
    about: aboutOf(String(row.payload)),
    state: row.state as DeliveryState,
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    nextAttemptAt: row.state === 'pending' ? epoch(row.next_attempt_at) : null,
    lastStatus: epoch(row.last_status),
    lastError: (row.last_error as string | null) ?? null,
    createdAt: Number(row.created_at),
    finishedAt: epoch(row.finished_at),
  }
}

/** Deliveries with their `to` in words. */
async function inWords<View extends { recipient: string; to: string }>(views: View[]) {
  const words = await recipientsInWords(views.map((view) => view.recipient))
  return views.map((view) => ({ ...view, to: words.get(view.recipient) ?? view.recipient }))
}

/**
 * The gateways plugin's outgoing deliveries in the kernel outbox (push, mail, reminders)
 * for the console: listed by channel and state, their attempts, and a retry
 * through OutboxService.redeliver (the one behind webhooks' redelivery).
 */
@inject()
export class GatewayDeliveries {
  constructor(private outbox: OutboxService) {}

  /** Newest first; searched by recipient or event type. */
  async list(filter: DeliveryFilter) {
    const query = db.from(DELIVERIES).whereIn('channel', GATEWAY_CHANNELS)
    if (filter.channel) query.where('channel', filter.channel)
    if (filter.state) query.where('state', filter.state)
    whereContains(query, filter.search, ['recipient', 'event_type'])
    const page = await readPage(
      query,
      filter,
      (rows) => rows.orderBy('id', 'desc').select(COLUMNS),
      deliveryView
    )
    return { ...page, items: await inWords(page.items) }
  }

  /** Deliveries in each state, per channel (the pages' summary). */
  async counts() {
    const rows = await db
      .from(DELIVERIES)
      .whereIn('channel', GATEWAY_CHANNELS)
      .groupBy('channel', 'state')
      .select('channel', 'state')
      .count('* as total')
    return rows.map((row) => ({
      channel: row.channel as string,
      state: row.state as DeliveryState,
      total: Number(row.total),
    }))
  }

  /** One of the plugin's deliveries, or null. */
  async find(id: number) {
    const row = await this.outbox.find(id)
    if (!row || !GATEWAY_CHANNELS.includes(row.channel)) return null
    const [view] = await inWords([deliveryView(row)])
    return view
  }

  /** A delivery's attempts, oldest first (outcome, provider status, answer excerpt, error, duration). */
  async attempts(id: number) {
    const rows = await this.outbox.attemptsOf([id])
    return rows.map((row: any) => ({
      attempt: Number(row.attempt),
      outcome: row.outcome as string,
      status: epoch(row.status),
      response: (row.response as string | null) ?? null,
      error: (row.error as string | null) ?? null,
      durationMs: Number(row.duration_ms),
      startedAt: Number(row.started_at),
    }))
  }

  /**
   * Sends one of the plugin's deliveries again now, with a fresh set of
   * attempts. False: no such delivery of these channels, or it is being sent.
   */
  async retry(id: number): Promise<boolean> {
    if (!(await this.find(id))) return false
    return this.outbox.redeliver(id)
  }
}
