import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { OutboxService } from '#core/outbox/outbox_service'
import type { DeliveryState } from '#core/outbox/types'
import { serializeDelivery } from '../serializers/webhook_serializer.js'
import { CHANNEL, recipientOf, WebhookService, type WebhookRow } from './webhook_service.js'
import type { WebhookPayload } from './payloads.js'

export const DELIVERY_STATES: DeliveryState[] = [
  'pending',
  'sending',
  'delivered',
  'failed',
  'cancelled',
]

/** A subscription's deliveries in the kernel outbox: the log, redelivery, the test event. */
@inject()
export class DeliveryLog {
  constructor(
    private webhooks: WebhookService,
    private outbox: OutboxService
  ) {}

  async page(
    actor: Actor,
    webhookId: number,
    options: { page: number; nbMax: number; status?: DeliveryState }
  ) {
    await this.webhooks.owned(actor, webhookId)
    return this.pageOf(webhookId, options)
  }

  /** Without a rights check: the console (its own permission) calls it too. */
  async pageOf(
    webhookId: number,
    options: { page: number; nbMax: number; status?: DeliveryState }
  ) {
    const { rows, total } = await this.outbox.list(CHANNEL, recipientOf(webhookId), {
      state: options.status,
      offset: (options.page - 1) * options.nbMax,
      limit: options.nbMax,
    })
    const attempts = await this.outbox.attemptsOf(rows.map((row) => Number(row.id)))
    return {
      total,
      deliveries: rows.map((row) =>
        serializeDelivery(
          row,
          attempts.filter((attempt) => Number(attempt.delivery_id) === Number(row.id))
        )
      ),
    }
  }

  /**
   * One delivery again (with webhookId: only one of that subscription's), or
   * every failed (or cancelled) one of a subscription since a time.
   */
  async redeliver(
    actor: Actor,
    input: { deliveryId?: number; webhookId?: number; since?: number }
  ): Promise<number[]> {
    if (input.deliveryId) {
      const row = await this.outbox.find(input.deliveryId)
      const webhookId = Number(row?.recipient.slice(3))
      if (
        !row ||
        row.channel !== CHANNEL ||
        (input.webhookId !== undefined && input.webhookId !== webhookId)
      )
        throw rpcError('NOT_FOUND', `Delivery ${input.deliveryId} not found`)
      const { row: subscription } = await this.webhooks.owned(actor, webhookId)
      assertActive(subscription)
      if (!(await this.outbox.redeliver(input.deliveryId)))
        throw rpcError('CONFLICT', `Delivery ${input.deliveryId} is being sent right now`)
      return [input.deliveryId]
    }
    if (!input.webhookId)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: deliveryId (or webhookId and since)')
    const { row } = await this.webhooks.owned(actor, input.webhookId)
    assertActive(row)
    const ids = await this.outbox.failedSince(
      CHANNEL,
      recipientOf(input.webhookId),
      (input.since ?? 0) * 1000
    )
    for (const id of ids) await this.outbox.redeliver(id)
    return ids
  }

  /** Sends a `webhook.test` event now (whatever the subscription's events). */
  async test(actor: Actor, webhookId: number) {
    const { book, row } = await this.webhooks.owned(actor, webhookId)
    const idempotencyKey = `wh${webhookId}.webhook.test.${Date.now()}.${Math.random().toString(36).slice(2, 8)}`
    const payload: WebhookPayload = {
      type: 'webhook.test',
      timestamp: new Date().toISOString(),
      data: {
        webhookId,
        idempotencyKey,
        book: { b_o: book.b_o, b_c: book.b_c },
        catId: row.category_id === null ? null : Number(row.category_id),
        actor: { u_c: actor.user.code, onBehalfOf: null },
      },
    }
    const pending: (() => unknown)[] = []
    await this.outbox.enqueue(
      db.connection(),
      [
        {
          channel: CHANNEL,
          recipient: recipientOf(webhookId),
          idempotencyKey,
          eventType: 'webhook.test',
          payload,
          maxAttempts: 1,
        },
      ],
      (callback) => pending.push(callback)
    )
    for (const callback of pending) await callback()
    const delivery = await db
      .from('outbox_deliveries')
      .where('channel', CHANNEL)
      .where('idempotency_key', idempotencyKey)
      .select('id')
      .first()
    return { deliveryId: Number(delivery?.id ?? 0), idempotencyKey }
  }
}

/** Redelivery needs an enabled subscription (owned() has just read its row). */
function assertActive(row: WebhookRow) {
  if (!Number(row.active))
    throw rpcError(
      'CONFLICT',
      `Webhook ${row.id} is disabled: enable it (updateWebhook active=1) before redelivering`
    )
}
