import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { looseText, stamp, text } from '#core/rpc/wire'
import { WebhookService } from '../services/webhook_service.js'
import { serializeWebhook } from '../serializers/webhook_serializer.js'

const validator = vine.compile(
  vine.object({
    b_o: text().optional(),
    catId: stamp().optional(),
    b_c: text().optional(),
    url: looseText().maxLength(2048),
    events: looseText().maxLength(255),
    fieldIds: looseText().maxLength(1024).optional(),
    description: looseText().maxLength(500).optional(),
  })
)

/** createWebhook: a subscription of a table (catId) or a book (b_c); the secret is answered once. (plugins/webhooks/README.md) */
@inject()
export default class CreateWebhook extends BaseOperation {
  static operation = 'createWebhook'
  static auth = 'session' as const
  static writes = true
  static validator = validator

  constructor(private webhooks: WebhookService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const { subscription, secret } = await this.webhooks.create(ctx.actor!, input, input)
    return { webhook: serializeWebhook(subscription), secret }
  }
}
