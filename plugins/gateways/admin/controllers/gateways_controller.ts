import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { consoleActor } from '#admin/actor'
import { refusalAsFormError, validatedBody } from '#admin/forms'
import { listQuery } from '#admin/list_query'
import { UserService } from '#core/services/user_service'
import { GatewayLimits } from '../../services/gateway_limits.js'
import { PushDeviceService } from '../../services/push_device_service.js'
import { PushDeliveryService } from '../../services/push/push_delivery_service.js'
import { SmsGatewayService, type BookPair } from '../../services/sms_gateway_service.js'
import { DELIVERY_STATES, GATEWAY_CHANNELS, GatewayDeliveries } from '../gateway_deliveries.js'
import { GatewayDirectory } from '../gateway_directory.js'
import { SMS_STATES, SmsOutboxLog } from '../sms_outbox_log.js'
import { MailInService } from '../../services/mail_in/mail_in_service.js'
import { userActor } from '#core/audit/audit_log'
import type { MailOutcome } from '../../services/mail_in/mail_in_log.js'

const GATEWAYS_PER_PAGE = 25
const DEVICES_PER_PAGE = 25
const UNSUPPORTED_SHOWN = 50
const DELIVERIES_PER_PAGE = 30
const SMS_PER_PAGE = 20
const MAILS_PER_PAGE = 30
const MAIL_OUTCOMES: MailOutcome[] = ['stored', 'duplicate', 'refused']

/** `owner/code`, as `gateway:allow --book` takes it. */
const BOOK_PATTERN = /^[^/\s]+\/[^/\s]+$/

const allowing = vine.compile(
  vine.object({
    phone: vine.string().trim().maxLength(32),
    book: vine.string().trim().maxLength(383).regex(BOOK_PATTERN).optional(),
  })
)
const deliveryFilter = vine.compile(
  vine.object({
    channel: vine.string().in(GATEWAY_CHANNELS).optional(),
    state: vine.enum(DELIVERY_STATES).optional(),
  })
)

const smsFilter = vine.compile(vine.object({ smsState: vine.enum(SMS_STATES).optional() }))
const mailFilter = vine.compile(vine.object({ outcome: vine.enum(MAIL_OUTCOMES).optional() }))

const bookPair = (book: string | undefined): BookPair | null => {
  if (!book) return null
  const [owner, code] = book.split('/')
  return { b_o: owner, b_c: code }
}

/**
 * The gateways plugin's console pages (/admin/gateways): SMS gateways
 * (pending registrations, allowing a number with its book, unregistering),
 * push devices (deactivating, the unsupported ones), and the outgoing
 * deliveries with their log and a retry. Writes call the same service
 * methods as `node ace gateway:allow`, unregisterSMSGateway and
 * updatePushId; reads go through GatewayDirectory and GatewayDeliveries.
 */
@inject()
export default class GatewaysController {
  private directory = new GatewayDirectory()
  private sms = new SmsOutboxLog()

  constructor(
    private gateways: SmsGatewayService,
    private limits: GatewayLimits,
    private devices: PushDeviceService,
    private push: PushDeliveryService,
    private deliveries: GatewayDeliveries,
    private users: UserService,
    private mailIn: MailInService
  ) {}

  async index({ inertia, request }: HttpContext) {
    const gateways = await this.directory.gateways(await listQuery(request.qs(), GATEWAYS_PER_PAGE))
    return inertia.render('gateways/index', { gateways })
  }

  async show(ctx: HttpContext) {
    const gateway = await this.findGateway(ctx)
    const book = gateway.fixedBook ?? gateway.sessionBook
    return ctx.inertia.render('gateways/show', {
      gateway,
      rate: await this.limits.gatewayState(gateway.phone),
      messagesIn: await this.directory.smsMessagesOf(book),
      messagesOut: await this.sms.latestOf(gateway.id),
      outbox: await this.sms.counts(gateway.id),
    })
  }

  /** Allows a number (a pending one, or a new one), fixing its book or freeing it. */
  async allow(ctx: HttpContext) {
    const input = await validatedBody(ctx, allowing)
    if (!input) return ctx.response.redirect().back()
    const allowed = await refusalAsFormError(ctx, () =>
      this.gateways.allow(
        input.phone,
        bookPair(input.book),
        userActor(ctx.auth.use('web').user!, ctx.request.ip())
      )
    )
    if (allowed)
      ctx.session.flash(
        'notice',
        `${allowed.phone} may register as a gateway${input.book ? `, its messages going to ${input.book}` : ''}`
      )
    return ctx.response.redirect().back()
  }

  /** Ends the gateway's session, as its own unregisterSMSGateway would. */
  async unregister(ctx: HttpContext) {
    const gateway = await this.findGateway(ctx)
    await this.gateways.unregister(gateway)
    ctx.session.flash('notice', `${gateway.phone} unregistered: its sesskey no longer works`)
    return ctx.response.redirect().back()
  }

  /** Props are functions: paging the devices reloads that list alone. */
  async devicesIndex({ inertia, request }: HttpContext) {
    const qs = request.qs()
    return inertia.render('gateways/devices', {
      devices: async () => this.directory.devices(await listQuery(qs, DEVICES_PER_PAGE, 'devices')),
      unsupported: () => this.unsupportedDevices(),
    })
  }

  private async unsupportedDevices() {
    const unsupported = await this.push.unsupportedDevices({ limit: UNSUPPORTED_SHOWN })
    const owners = await this.users.codesOf(unsupported.map((device) => device.userId))
    return unsupported.map((device) => ({
      ...device,
      user: owners.get(device.userId) ?? String(device.userId),
    }))
  }

  /** Deactivates a device as its owner would with updatePushId active=FALSE. */
  async deactivate(ctx: HttpContext) {
    const id = Number(ctx.params.id)
    const ownerId = Number.isSafeInteger(id) ? await this.directory.deviceOwner(id) : null
    const owner = ownerId === null ? null : await this.users.findById(ownerId)
    if (!owner) return ctx.response.abort('Not found', 404)
    const done = await refusalAsFormError(ctx, () =>
      this.devices.update(consoleActor(owner, ctx.auth.use('web').user!), {
        deviceId: id,
        active: false,
      })
    )
    if (done) ctx.session.flash('notice', `Device ${id} of ${owner.code} deactivated`)
    return ctx.response.redirect().back()
  }

  /**
   * The outbox channels' deliveries and the SMS outbox, each list with its
   * own page, search and state (page/search/channel/state, smsPage/smsSearch/
   * smsState): props are functions, so paging one list reloads it alone.
   */
  async deliveriesIndex({ inertia, request }: HttpContext) {
    const qs = request.qs()
    const filter = await deliveryFilter
      .validate({ channel: qs.channel || undefined, state: qs.state || undefined })
      .catch(() => ({ channel: undefined, state: undefined }))
    const { smsState } = await smsFilter
      .validate({ smsState: qs.smsState || undefined })
      .catch(() => ({ smsState: undefined }))
    return inertia.render('gateways/deliveries', {
      deliveries: async () =>
        this.deliveries.list({ ...(await listQuery(qs, DELIVERIES_PER_PAGE)), ...filter }),
      filter: {
        channel: filter.channel ?? '',
        state: filter.state ?? '',
        smsState: smsState ?? '',
      },
      channels: GATEWAY_CHANNELS,
      states: DELIVERY_STATES,
      counts: () => this.deliveries.counts(),
      sms: async () =>
        this.sms.list({ ...(await listQuery(qs, SMS_PER_PAGE, 'sms')), state: smsState }),
      smsStates: SMS_STATES,
      smsCounts: () => this.sms.counts(),
    })
  }

  /** Inbound e-mail, newest first: stored, duplicates and refusals with their reason. */
  async mail({ inertia, request }: HttpContext) {
    const qs = request.qs()
    const { outcome } = await mailFilter
      .validate({ outcome: qs.outcome || undefined })
      .catch(() => ({ outcome: undefined }))
    const { page, perPage } = await listQuery(qs, MAILS_PER_PAGE)
    const read = (at: number) =>
      this.mailIn.log({ offset: (at - 1) * perPage, limit: perPage, outcome })
    let found = await read(page)
    let shown = page
    // A page past the last reads the last one (a log that was pruned under the pager).
    const last = Math.max(1, Math.ceil(found.total / perPage))
    if (page > last) found = await read((shown = last))
    return inertia.render('gateways/mail', {
      mails: { items: found.rows, total: found.total, page: shown, perPage, search: '' },
      outcome: outcome ?? '',
      outcomes: MAIL_OUTCOMES,
    })
  }

  /** One delivery with its log (every attempt). */
  async delivery(ctx: HttpContext) {
    const id = Number(ctx.params.id)
    const delivery = Number.isSafeInteger(id) ? await this.deliveries.find(id) : null
    if (!delivery) return ctx.response.abort('Not found', 404)
    return ctx.inertia.render('gateways/delivery', {
      delivery,
      attempts: await this.deliveries.attempts(id),
    })
  }

  async retry(ctx: HttpContext) {
    const id = Number(ctx.params.id)
    if (Number.isSafeInteger(id) && (await this.deliveries.retry(id)))
      ctx.session.flash('notice', `Delivery ${id} queued to be sent again`)
    else ctx.session.flash('errorsBag', { form: `Delivery ${id} cannot be retried now` })
    return ctx.response.redirect().back()
  }

  private async findGateway(ctx: HttpContext) {
    const id = Number(ctx.params.id)
    const gateway = Number.isSafeInteger(id) ? await this.directory.gateway(id) : null
    if (!gateway) ctx.response.abort('Not found', 404)
    return gateway!
  }
}
