import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { MemberService } from '../services/member_service.js'
import { bookFields, bookOf } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...bookFields }))

/** leaveBook (extension): any member but the owner leaves; the book comes back with del true in the user's next delta. */
@inject()
export default class LeaveBook extends BaseOperation {
  static operation = 'leaveBook'
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
    await this.members.leave(actor, named.b_o, named.b_c)
    return { sstamp: await this.stamps.watermark() }
  }
}
