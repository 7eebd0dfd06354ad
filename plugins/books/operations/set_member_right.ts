import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import members from '../services/members.js'
import { bookFields, bookOf, memberLogin } from '../validators/params.js'

/** setMemberRight (extension): RIGHT_ADMIN sets `member`'s right (1 to 4); the owner's right is fixed. */
export default class SetMemberRight extends BaseOperation {
  static operation = 'setMemberRight'
  static writes = true
  static validator = vine.compile(vine.object({ ...bookFields, right: stamp() }))

  async handle(input: { b_o?: string; b_c?: string; right: number }, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    const result = await members.setRight(
      actor,
      named.b_o,
      named.b_c,
      memberLogin(ctx.params),
      input.right
    )
    return {
      sstamp: await stamps.watermark(),
      member: { u_c: result.u_c, invite: result.invite, right: result.right, del: result.del },
    }
  }
}
