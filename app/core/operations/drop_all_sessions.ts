import { inject } from '@adonisjs/core'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { AccessService } from '#core/services/access_service'

/** Keeps the calling session; drops every other session and oauthkey of its user. */
@inject()
export default class DropAllSessions extends BaseOperation {
  static operation = 'dropAllSessions'

  constructor(private access: AccessService) {
    super()
  }

  async handle(_input: unknown, ctx: OperationContext) {
    await this.access.dropOtherSessions(ctx.actor!.session)
    return {}
  }
}
