import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import members from '../services/members.js'
import { bookFields, bookOf, memberLogin } from '../validators/params.js'

/**
 * removeMember (extension): RIGHT_ADMIN removes `member` (or cancels their
 * invitation). The owner cannot be removed; only the owner removes another
 * administrator.
 */
export default class RemoveMember extends BaseOperation {
  static operation = 'removeMember'
  static writes = true
  static validator = vine.compile(vine.object({ ...bookFields }))

  async handle(input: { b_o?: string; b_c?: string }, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    const result = await members.remove(actor, named.b_o, named.b_c, memberLogin(ctx.params))
    return {
      sstamp: await stamps.watermark(),
      member: { u_c: result.u_c, invite: result.invite, right: result.right, del: result.del },
    }
  }
}
