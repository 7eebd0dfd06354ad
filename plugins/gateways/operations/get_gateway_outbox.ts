import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { SmsOutboxService } from '../services/sms_outbox_service.js'

const validator = vine.compile(vine.object({ limit: stamp().range([1, 100]).optional() }))

/**
 * getGatewayOutbox (issue 19 item 2): the SMS the calling gateway is to send,
 * leased to it until it acknowledges them (ackGatewayOutbox) or the lease
 * lapses. A collection writes (the leases): refused to nothing but a
 * gateway's sesskey.
 */
@inject()
export default class GetGatewayOutbox extends BaseOperation {
  static operation = 'getGatewayOutbox'
  static auth = 'gateway' as const
  static writes = true
  static validator = validator

  constructor(private outbox: SmsOutboxService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.outbox.handOut(ctx.gateway!.id, input.limit ?? 20)
  }
}
