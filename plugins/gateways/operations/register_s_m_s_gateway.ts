import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { looseText, text } from '#core/rpc/wire'
import { SmsGatewayService } from '../services/sms_gateway_service.js'

const validator = vine.compile(
  vine.object({
    o_u: text(),
    appname: looseText().optional(),
    b_o: text().optional(),
    b_c: text().optional(),
  })
)

/**
 * registerSMSGateway (spec 4.A.2): a sesskey bound to the gateway whose number
 * is o_u, once an administrator allowed that number; GATEWAY_PENDING otherwise.
 */
@inject()
export default class RegisterSMSGateway extends BaseOperation {
  static operation = 'registerSMSGateway'
  static auth = 'none' as const
  static validator = validator

  constructor(private gateways: SmsGatewayService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const { sesskey } = await this.gateways.register({
      o_u: input.o_u,
      appname: input.appname ?? '',
      b_o: input.b_o,
      b_c: input.b_c,
      ip: ctx.ip,
    })
    return { sesskey }
  }
}
