import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import { inject } from '@adonisjs/core'
import { appKey } from '#config/app'
import { RpcError } from '#core/rpc/errors'
import { MessageService } from '#plugins/books/services/message_service'
import { withoutBookWord } from '#plugins/books/operations/send_msg'
import { DeviceApiError, type AndroidDevice } from './android_device_service.js'
import { GatewayLimits } from './gateway_limits.js'
import { SmsGatewayService, type SmsGateway } from './sms_gateway_service.js'
import { SmsOutboxService, type AckState, type SmsAck } from './sms_outbox_service.js'

/** The app's processing states (client-go smsgateway.ProcessingState). */
export const PROCESSING_STATES = [
  'Pending',
  'Processed',
  'Sent',
  'Delivered',
  'Failed',
  'Cancelling',
  'Cancelled',
] as const
export type ProcessingState = (typeof PROCESSING_STATES)[number]

/** What each state the app reports means for the SMS (absent: nothing to record yet). */
const ACK_OF: Partial<Record<ProcessingState, AckState>> = {
  Sent: 'sent',
  Delivered: 'delivered',
  Failed: 'failed',
  Cancelled: 'failed',
}

/** The app's webhook events Quire listens to (the list GET /webhooks answers). */
export const WEBHOOK_EVENTS = ['sms:received', 'sms:sent', 'sms:delivered', 'sms:failed'] as const
type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

const EVENT_ACK: Record<Exclude<WebhookEvent, 'sms:received'>, AckState> = {
  'sms:sent': 'sent',
  'sms:delivered': 'delivered',
  'sms:failed': 'failed',
}

/** One state report of PATCH /message (client-go MobilePatchMessageItem). */
export interface MessageStateReport {
  id: string
  state: ProcessingState
  recipients: { phoneNumber: string; state: ProcessingState; error?: string | null }[]
}

/** A webhook the app posts (its JSON body: id, event, deviceId, payload, webhookId). */
export interface WebhookPost {
  id: string
  event: string
  payload: {
    messageId?: string
    phoneNumber?: string
    message?: string
    reason?: string | null
  }
}

/** The key a device's webhook URL carries: derived from APP_KEY, so nothing is stored. */
const webhookKey = Buffer.from(
  hkdfSync('sha256', appKey.release(), 'quire-gateways', 'android-webhooks', 32)
)

const keyOf = (deviceId: string) =>
  createHmac('sha256', webhookKey).update(deviceId).digest('base64url')

/** The event that wakes the app to fetch its messages (the app's server sends it with no data). */
export const MESSAGE_ENQUEUED_FRAME = 'event: MessageEnqueued\ndata: null\n\n'

/** A comment line now and then keeps proxies from closing an idle stream. */
const KEEPALIVE_FRAME = ':keepalive\n\n'
const KEEPALIVE_MS = 20_000

/** Ids Quire hands to the app are the outbox row's id, in decimal. */
const outboxIdOf = (id: string | undefined) => (/^\d{1,15}$/.test(id ?? '') ? Number(id) : null)

/**
 * The rest of the SMS Gateway for Android device API (private-server mode,
 * README "SMS Gateway for Android"): a phone tied to a gateway number
 * (gateway:allow --device) collects that gateway's outbound SMS (GET
 * /message), reports their states (PATCH /message and the sms:sent /
 * delivered / failed webhooks), is woken by the event stream, and forwards
 * the SMS it receives (the sms:received webhook) into books exactly as the
 * gateway's sendMsg does: the sender found by number, the gateway's book or
 * the first word, MessageService.send.
 */
@inject()
export class AndroidGatewayService {
  /** The open event streams' ends (a singleton: every stream of this process). */
  private streams = new Set<() => void>()

  constructor(
    private gateways: SmsGatewayService,
    private outbox: SmsOutboxService,
    private messages: MessageService,
    private limits: GatewayLimits
  ) {}

  /** The allowed gateway the device serves, or null (not tied yet, or no longer allowed). */
  async gatewayOf(device: AndroidDevice): Promise<SmsGateway | null> {
    return device.gatewayId === null ? null : this.gateways.byId(device.gatewayId)
  }

  /** GET /message: the gateway's due SMS in the app's MobileMessage shape, leased to the phone. */
  async pendingMessages(device: AndroidDevice) {
    const gateway = await this.gatewayOf(device)
    if (!gateway) return []
    const leased = await this.outbox.collect(gateway.id)
    return leased.map((sms) => ({
      id: String(sms.id),
      message: sms.text,
      textMessage: { text: sms.text },
      phoneNumbers: [sms.to],
      isEncrypted: false,
      withDeliveryReport: true,
      state: 'Pending',
      createdAt: new Date(sms.createdAt).toISOString(),
    }))
  }

  /** PATCH /message: the states the phone reports; ids it does not own are ignored, as the app's server does. */
  async updateStates(device: AndroidDevice, reports: MessageStateReport[]) {
    const gateway = await this.gatewayOf(device)
    if (!gateway) return
    const acks: SmsAck[] = []
    for (const report of reports) {
      const id = outboxIdOf(report.id)
      const state = ACK_OF[report.state]
      if (id === null || !state) continue
      const reason =
        report.state === 'Cancelled'
          ? 'cancelled on the phone'
          : report.recipients.find((recipient) => recipient.error)?.error
      acks.push({ id, state, reason })
    }
    await this.outbox.ack(gateway.id, acks, { unknown: 'skip' })
  }

  /**
   * GET /events: `send` gets MessageEnqueued each time SMS are queued for
   * the device's gateway (in any instance: the plugin's realtime binding
   * relays them), and at once when some are already due; a keepalive
   * comment otherwise. `end` closes the stream (closeStreams at shutdown).
   * Answers the function that ends the subscription (the phone went away).
   */
  async subscribe(
    device: AndroidDevice,
    send: (frame: string) => void,
    end: () => void
  ): Promise<() => void> {
    const gateway = await this.gatewayOf(device)
    const stopListening = this.outbox.onEnqueued((gatewayId) => {
      if (gateway && (gatewayId === null || gatewayId === gateway.id)) send(MESSAGE_ENQUEUED_FRAME)
    })
    const keepalive = setInterval(() => send(KEEPALIVE_FRAME), KEEPALIVE_MS)
    this.streams.add(end)
    if (gateway && (await this.outbox.hasDue(gateway.id))) send(MESSAGE_ENQUEUED_FRAME)
    return () => {
      stopListening()
      clearInterval(keepalive)
      this.streams.delete(end)
    }
  }

  /**
   * Ends every open event stream (a graceful shutdown): the HTTP server then
   * closes at once instead of waiting out its grace for phones that never
   * hang up. The app reconnects to another instance.
   */
  closeStreams() {
    for (const end of [...this.streams]) end()
  }

  /** GET /webhooks: Quire's own endpoint for each event it listens to (none before the phone is tied). */
  async webhooks(device: AndroidDevice, origin: string) {
    if (!(await this.gatewayOf(device))) return []
    const url = `${origin}/gateways/android/webhook/${encodeURIComponent(device.id)}?key=${keyOf(device.id)}`
    return WEBHOOK_EVENTS.map((event) => ({
      id: `quire-${event.replace(':', '-')}`,
      deviceId: device.id,
      url,
      event,
    }))
  }

  /** Whether a webhook URL's key is the device's (constant time). */
  webhookKeyMatches(deviceId: string, key: string) {
    const expected = Buffer.from(keyOf(deviceId))
    const given = Buffer.from(key)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /**
   * A webhook of the tied phone: sms:received is stored in a book as the
   * gateway's sendMsg would store it (idempotent on the webhook's id: the
   * app retries); sms:sent, sms:delivered and sms:failed report an SMS
   * Quire handed it. Other events are accepted and ignored.
   */
  async webhook(device: AndroidDevice, post: WebhookPost) {
    const gateway = await this.gatewayOf(device)
    if (!gateway) throw new DeviceApiError(403, 'This device serves no gateway number yet')
    if (post.event === 'sms:received') return this.received(device, gateway, post)
    if (post.event in EVENT_ACK) {
      const id = outboxIdOf(post.payload.messageId)
      const state = EVENT_ACK[post.event as keyof typeof EVENT_ACK]
      if (id !== null) {
        await this.outbox.ack(gateway.id, [{ id, state, reason: post.payload.reason }], {
          unknown: 'skip',
        })
      }
    }
    return null
  }

  private async received(device: AndroidDevice, gateway: SmsGateway, post: WebhookPost) {
    await this.limits.gateway(gateway.phone)
    const actor = await this.gateways.actorFor(gateway, {
      o_u: gateway.phone,
      u_c: post.payload.phoneNumber ?? '',
      sesskey: '',
    })
    const target = withoutBookWord({ msg: post.payload.message ?? '' }, actor)
    const uuid = `android-${createHash('sha256').update(`${device.id}:${post.id}`).digest('hex').slice(0, 32)}`
    const result = await this.messages.send(actor, {
      msg: target.msg,
      b_c: target.b_c,
      uuid,
      msgMethod: '_sms',
    })
    return { smid: result.smid, created: result.created }
  }
}

/** The HTTP status of a refusal of api.php's kind met by the device API (its JSON body is {message, code}). */
export function statusOfRpcError(error: RpcError) {
  if (error.code === 'RATE_LIMITED') return 429
  if (error.code === 'INVALID_PARAMETER' || error.code === 'MISSING_PARAMETER') return 400
  return 422
}
