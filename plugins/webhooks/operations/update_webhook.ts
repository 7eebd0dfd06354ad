import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, looseText, stamp } from '#core/rpc/wire'
import { WebhookService } from '../services/webhook_service.js'
import { serializeWebhook } from '../serializers/webhook_serializer.js'

const validator = vine.compile(
  vine.object({
    webhookId: stamp(),
    url: looseText().maxLength(2048).optional(),
    events: looseText().maxLength(255).optional(),
    fieldIds: looseText().maxLength(1024).optional(),
    description: looseText().maxLength(500).optional(),
    active: flag().optional(),
  })
)

/** updateWebhook: url, events, fieldIds, description, active (1 enables a disabled one again). (plugins/webhooks/README.md) */
@inject()
export default class UpdateWebhook extends BaseOperation {
  static operation = 'updateWebhook'
  static auth = 'session' as const
  static writes = true
  static validator = validator

  constructor(private webhooks: WebhookService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const subscription = await this.webhooks.update(ctx.actor!, input.webhookId, {
      ...input,
      active: input.active ?? undefined,
    })
    return { webhook: serializeWebhook(subscription) }
  }
}
