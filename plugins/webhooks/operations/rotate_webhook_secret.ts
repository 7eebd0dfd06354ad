import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { WebhookService } from '../services/webhook_service.js'
import { serializeWebhook } from '../serializers/webhook_serializer.js'

const validator = vine.compile(
  vine.object({
    webhookId: stamp(),
  })
)

/** rotateWebhookSecret: a new secret, answered once; the old one also signs for 24 hours. (plugins/webhooks/README.md) */
@inject()
export default class RotateWebhookSecret extends BaseOperation {
  static operation = 'rotateWebhookSecret'
  static auth = 'session' as const
  static writes = true
  static validator = validator

  constructor(private webhooks: WebhookService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const { subscription, secret } = await this.webhooks.rotate(ctx.actor!, input.webhookId)
    return { webhook: serializeWebhook(subscription), secret }
  }
}
