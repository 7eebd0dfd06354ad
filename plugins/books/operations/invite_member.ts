import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import members from '../services/members.js'
import { RIGHT_READWRITE } from '../rights.js'
import { bookFields, bookOf, memberLogin } from '../validators/params.js'

/**
 * inviteMember (extension): RIGHT_ADMIN invites `member` (a user code, e-mail
 * or phone; aliases login, u_invite) with `right` (default 2). The invitee
 * sees the book with accepted false until acceptInvitation.
 */
export default class InviteMember extends BaseOperation {
  static operation = 'inviteMember'
  static writes = true
  static validator = vine.compile(vine.object({ ...bookFields, right: stamp().optional() }))

  async handle(input: { b_o?: string; b_c?: string; right?: number }, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    const result = await members.invite(
      actor,
      named.b_o,
      named.b_c,
      memberLogin(ctx.params),
      input.right ?? RIGHT_READWRITE
    )
    return {
      sstamp: await stamps.watermark(),
      member: { u_c: result.u_c, invite: result.invite, right: result.right, del: result.del },
    }
  }
}
