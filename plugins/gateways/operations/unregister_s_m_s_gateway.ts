import { inject } from '@adonisjs/core'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { SmsGatewayService } from '../services/sms_gateway_service.js'

/** unregisterSMSGateway (spec 4.A.2): ends the calling gateway's session. */
@inject()
export default class UnregisterSMSGateway extends BaseOperation {
  static operation = 'unregisterSMSGateway'
  static auth = 'gateway' as const
  static writes = true

  constructor(private gateways: SmsGatewayService) {
    super()
  }

  async handle(_input: unknown, ctx: OperationContext) {
    await this.gateways.unregister(ctx.gateway!)
    return {}
  }
}
