import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { UserService } from '#core/services/user_service'
import { consoleActor } from '#admin/actor'
import { refusalAsFormError, validatedBody } from '#admin/forms'
import { listQuery } from '#admin/list_query'
import { DeliveryLog, DELIVERY_STATES } from '../../services/delivery_log.js'
import { WebhookDirectory } from '../../services/webhook_directory.js'
import { WebhookService } from '../../services/webhook_service.js'
import { serializeWebhook } from '../../serializers/webhook_serializer.js'

const PER_PAGE = 25
const DELIVERIES_PER_PAGE = 20
/** The flash key of a rotated secret, shown once. */
const NEW_SECRET_FLASH = 'newWebhookSecret'

const listFilter = vine.compile(
  vine.object({
    state: vine.enum(['active', 'disabled', '']).optional(),
    kind: vine.enum(['table', 'book', '']).optional(),
    book: vine.number().withoutDecimals().min(1).optional(),
    table: vine.number().withoutDecimals().min(1).optional(),
  })
)
const statusFilter = vine.compile(
  vine.object({ status: vine.enum([...DELIVERY_STATES, '' as const]).optional() })
)
const activation = vine.compile(vine.object({ active: vine.boolean() }))
const redelivery = vine.compile(
  vine.object({
    deliveryId: vine.number().withoutDecimals().min(1).optional(),
    since: vine.number().withoutDecimals().min(0).optional(),
  })
)

/**
 * The webhooks plugin's console pages (/admin/webhooks): every subscription
 * (searched, filtered by state and kind, by book or table), and one
 * subscription with its delivery log. Every read and change goes through
 * WebhookService and DeliveryLog, the methods behind listWebhooks,
 * getWebhookDeliveries, updateWebhook, rotateWebhookSecret,
 * redeliverWebhook, testWebhook and deleteWebhook, acting as the book's
 * owner on the signed-in administrator's behalf: the same checks hold.
 */
@inject()
export default class WebhooksController {
  private directory = new WebhookDirectory()

  constructor(
    private webhooks: WebhookService,
    private log: DeliveryLog,
    private users: UserService
  ) {}

  async index({ inertia, request }: HttpContext) {
    const qs = request.qs()
    const query = await listQuery(qs, PER_PAGE)
    const filter = await listFilter.validate(qs).catch(() => ({}) as Record<string, undefined>)
    const subscriptions = await this.directory.search(query, {
      state: filter.state ?? '',
      kind: filter.kind ?? '',
      bookId: filter.book,
      catId: filter.table,
    })
    return inertia.render('webhooks/index', {
      subscriptions,
      filter: {
        state: filter.state ?? '',
        kind: filter.kind ?? '',
        book: filter.book ?? null,
        table: filter.table ?? null,
      },
    })
  }

  async show(ctx: HttpContext) {
    const id = this.idOf(ctx)
    const actor = await this.actorFor(ctx, id)
    const found = await this.webhooks.owned(actor, id)
    const { page } = await listQuery(ctx.request.qs(), DELIVERIES_PER_PAGE)
    const { status } = await statusFilter
      .validate(ctx.request.qs())
      .catch(() => ({ status: undefined }))
    const log = await this.log.page(actor, id, {
      page,
      nbMax: DELIVERIES_PER_PAGE,
      status: status || undefined,
    })
    return ctx.inertia.render('webhooks/show', {
      webhook: {
        ...serializeWebhook(found),
        table: found.category?.name ?? null,
        owner: actor.user.code,
        bookId: found.book.id,
      },
      deliveries: {
        items: log.deliveries,
        total: log.total,
        page,
        perPage: DELIVERIES_PER_PAGE,
        search: '',
      },
      status: status ?? '',
      states: DELIVERY_STATES,
      newSecret: ctx.session.flashMessages.get(NEW_SECRET_FLASH) ?? null,
    })
  }

  async setActive(ctx: HttpContext) {
    const id = this.idOf(ctx)
    const input = await validatedBody(ctx, activation)
    if (!input) return ctx.response.redirect().back()
    const actor = await this.actorFor(ctx, id)
    if (await refusalAsFormError(ctx, () => this.webhooks.update(actor, id, input)))
      ctx.session.flash('notice', input.active ? 'Webhook enabled' : 'Webhook disabled')
    return ctx.response.redirect().back()
  }

  async rotate(ctx: HttpContext) {
    const id = this.idOf(ctx)
    const actor = await this.actorFor(ctx, id)
    const rotated = await refusalAsFormError(ctx, () => this.webhooks.rotate(actor, id))
    if (rotated) ctx.session.flash(NEW_SECRET_FLASH, rotated.secret)
    return ctx.response.redirect().back()
  }

  async redeliver(ctx: HttpContext) {
    const id = this.idOf(ctx)
    const input = await validatedBody(ctx, redelivery)
    if (!input) return ctx.response.redirect().back()
    const actor = await this.actorFor(ctx, id)
    // One delivery of this subscription, or every failed one since a time.
    const ids = await refusalAsFormError(ctx, () =>
      this.log.redeliver(
        actor,
        input.deliveryId
          ? { deliveryId: input.deliveryId, webhookId: id }
          : { webhookId: id, since: input.since ?? 0 }
      )
    )
    if (ids)
      ctx.session.flash(
        'notice',
        ids.length === 1 ? 'Sent again' : `${ids.length} deliveries sent again`
      )
    return ctx.response.redirect().back()
  }

  async test(ctx: HttpContext) {
    const id = this.idOf(ctx)
    const actor = await this.actorFor(ctx, id)
    if (await refusalAsFormError(ctx, () => this.log.test(actor, id)))
      ctx.session.flash('notice', 'A webhook.test event is on its way')
    return ctx.response.redirect().back()
  }

  async destroy(ctx: HttpContext) {
    const id = this.idOf(ctx)
    const actor = await this.actorFor(ctx, id)
    const deleted = await refusalAsFormError(ctx, async () => {
      await this.webhooks.delete(actor, id)
      return true
    })
    if (!deleted) return ctx.response.redirect().back()
    ctx.session.flash('notice', `Webhook ${id} deleted`)
    return ctx.response.redirect('/admin/webhooks')
  }

  private idOf(ctx: HttpContext) {
    const id = Number(ctx.params.id)
    if (!Number.isSafeInteger(id) || id < 1) ctx.response.abort('Not found', 404)
    return id
  }

  /** The book's owner, on the signed-in administrator's behalf (404 for an unknown webhook). */
  private async actorFor(ctx: HttpContext, webhookId: number) {
    const ownerId = await this.directory.ownerOf(webhookId)
    const owner = ownerId === null ? null : await this.users.findById(ownerId)
    if (!owner) return ctx.response.abort('Not found', 404)
    return consoleActor(owner, ctx.auth.use('web').user!, ctx.request.ip())
  }
}
