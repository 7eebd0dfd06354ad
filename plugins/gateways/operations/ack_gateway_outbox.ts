import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { idList, looseText } from '#core/rpc/wire'
import { SmsOutboxService } from '../services/sms_outbox_service.js'

/** Also the socket's ack frame's schema (plugins/gateways/socket): the same verdicts. */
export const validator = vine.compile(
  vine.object({
    ids: idList().minLength(1).maxLength(500),
    state: vine.enum(['sent', 'delivered', 'failed'] as const),
    reason: looseText().trim().maxLength(255).optional(),
  })
)

/**
 * ackGatewayOutbox (issue 19 item 2): the calling gateway reports SMS it
 * collected as sent, delivered or failed (with a reason). Every id must be
 * one of its SMS, else NOT_FOUND and nothing is written.
 */
@inject()
export default class AckGatewayOutbox extends BaseOperation {
  static operation = 'ackGatewayOutbox'
  static auth = 'gateway' as const
  static writes = true
  static validator = validator

  constructor(private outbox: SmsOutboxService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const { updated } = await this.outbox.ack(
      ctx.gateway!.id,
      input.ids.map((id) => ({ id, state: input.state, reason: input.reason }))
    )
    return { updated }
  }
}
