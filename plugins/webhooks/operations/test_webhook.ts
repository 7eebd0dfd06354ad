import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { DeliveryLog } from '../services/delivery_log.js'

const validator = vine.compile(
  vine.object({
    webhookId: stamp(),
  })
)

/** testWebhook: sends a `webhook.test` event now (one attempt). (plugins/webhooks/README.md) */
@inject()
export default class TestWebhook extends BaseOperation {
  static operation = 'testWebhook'
  static auth = 'session' as const
  static writes = true
  static validator = validator

  constructor(private log: DeliveryLog) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.log.test(ctx.actor!, input.webhookId)
  }
}
