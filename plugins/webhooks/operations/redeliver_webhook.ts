import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { int, stamp } from '#core/rpc/wire'
import { DeliveryLog } from '../services/delivery_log.js'

const validator = vine.compile(
  vine.object({
    deliveryId: stamp().optional(),
    webhookId: stamp().optional(),
    since: int().optional(),
  })
)

/** redeliverWebhook: one delivery (deliveryId) or every failed one of a webhook since a time (webhookId, since in seconds). (plugins/webhooks/README.md) */
@inject()
export default class RedeliverWebhook extends BaseOperation {
  static operation = 'redeliverWebhook'
  static auth = 'session' as const
  static writes = true
  static validator = validator

  constructor(private log: DeliveryLog) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const deliveryIds = await this.log.redeliver(ctx.actor!, input)
    return { deliveryIds }
  }
}
