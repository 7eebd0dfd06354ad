import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { MemberService } from '../services/member_service.js'
import { bookFields, bookOf, memberFields, memberOf } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...bookFields, ...memberFields }))

/**
 * removeMember (extension): RIGHT_ADMIN removes `member` (or cancels their
 * invitation). The owner cannot be removed; only the owner removes another
 * administrator.
 */
@inject()
export default class RemoveMember extends BaseOperation {
  static operation = 'removeMember'
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
    const result = await this.members.remove(actor, named.b_o, named.b_c, memberOf(input))
    return {
      sstamp: await this.stamps.watermark(),
      member: { u_c: result.u_c, invite: result.invite, right: result.right, del: result.del },
    }
  }
}
