import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import access from '#core/services/access'

/** Keeps the calling session; drops every other session and oauthkey of its user. */
export default class DropAllSessions extends BaseOperation {
  static operation = 'dropAllSessions'

  async handle(_input: unknown, ctx: OperationContext) {
    await access.dropOtherSessions(ctx.actor!.session)
    return {}
  }
}
