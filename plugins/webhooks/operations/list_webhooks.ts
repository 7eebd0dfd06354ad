import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp, text } from '#core/rpc/wire'
import { WebhookService } from '../services/webhook_service.js'
import { serializeWebhook } from '../serializers/webhook_serializer.js'

const validator = vine.compile(
  vine.object({
    b_o: text().optional(),
    catId: stamp().optional(),
    b_c: text().optional(),
  })
)

/** listWebhooks: a table's (catId) or a book's (b_c) subscriptions, without secrets. (plugins/webhooks/README.md) */
@inject()
export default class ListWebhooks extends BaseOperation {
  static operation = 'listWebhooks'
  static auth = 'session' as const
  static validator = validator

  constructor(private webhooks: WebhookService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const list = await this.webhooks.list(ctx.actor!, input)
    return { webhooks: list.map(serializeWebhook) }
  }
}
