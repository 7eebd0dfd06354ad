import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { int, stamp } from '#core/rpc/wire'
import { DeliveryLog, DELIVERY_STATES } from '../services/delivery_log.js'

const validator = vine.compile(
  vine.object({
    webhookId: stamp(),
    page: int().optional(),
    nbMax: int().optional(),
    status: vine.enum(DELIVERY_STATES).optional(),
  })
)

/** getWebhookDeliveries: a subscription's delivery log, newest first, with each attempt. (plugins/webhooks/README.md) */
@inject()
export default class GetWebhookDeliveries extends BaseOperation {
  static operation = 'getWebhookDeliveries'
  static auth = 'session' as const
  static validator = validator

  constructor(private log: DeliveryLog) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const page = Math.max(1, input.page ?? 1)
    const nbMax = Math.min(Math.max(1, input.nbMax ?? 50), 500)
    return this.log.page(ctx.actor!, input.webhookId, { page, nbMax, status: input.status })
  }
}
