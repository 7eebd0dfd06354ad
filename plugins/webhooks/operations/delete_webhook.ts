import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { WebhookService } from '../services/webhook_service.js'

const validator = vine.compile(
  vine.object({
    webhookId: stamp(),
  })
)

/** deleteWebhook: the subscription goes; its waiting deliveries are cancelled (the log stays until its retention). (plugins/webhooks/README.md) */
@inject()
export default class DeleteWebhook extends BaseOperation {
  static operation = 'deleteWebhook'
  static auth = 'session' as const
  static writes = true
  static validator = validator

  constructor(private webhooks: WebhookService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    await this.webhooks.delete(ctx.actor!, input.webhookId)
    return { webhookId: input.webhookId }
  }
}
