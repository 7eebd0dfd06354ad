import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { MemberService } from '../services/member_service.js'
import { bookFields, bookOf } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...bookFields }))

/** declineInvitation (extension): a pending invitation is dropped; the book leaves the user's list (del true in a delta). */
@inject()
export default class DeclineInvitation extends BaseOperation {
  static operation = 'declineInvitation'
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
    await this.members.decline(actor, named.b_o, named.b_c)
    return { sstamp: await this.stamps.watermark() }
  }
}
