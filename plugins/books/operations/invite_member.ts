import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { StampService } from '#core/services/stamp_service'
import { MemberService } from '../services/member_service.js'
import { RIGHT_READWRITE } from '../rights.js'
import { bookFields, bookOf, memberFields, memberOf } from '../validators/params.js'

const validator = vine.compile(
  vine.object({ ...bookFields, ...memberFields, right: stamp().optional() })
)

/**
 * inviteMember (extension): RIGHT_ADMIN invites `member` (a user code, e-mail
 * or phone; aliases login, u_invite) with `right` (default 2). The invitee
 * sees the book with accepted false until acceptInvitation. An e-mail or
 * phone no account has answers `pending` true: the invitation waits for an
 * account with that address, and its link is sent there.
 */
@inject()
export default class InviteMember extends BaseOperation {
  static operation = 'inviteMember'
  static writes = true
  static validator = validator

  constructor(
    private members: MemberService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    const result = await this.members.invite(
      actor,
      named.b_o,
      named.b_c,
      memberOf(input),
      input.right ?? RIGHT_READWRITE
    )
    if ('pending' in result)
      return {
        sstamp: await this.stamps.watermark(),
        pending: true,
        member: { kind: result.kind, right: result.right },
      }
    return {
      sstamp: await this.stamps.watermark(),
      member: { u_c: result.u_c, invite: result.invite, right: result.right, del: result.del },
    }
  }
}
