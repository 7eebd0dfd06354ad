import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import members from '../services/members.js'
import { bookFields, bookOf } from '../validators/params.js'

/** leaveBook (extension): any member but the owner leaves; the book comes back with del true in the user's next delta. */
export default class LeaveBook extends BaseOperation {
  static operation = 'leaveBook'
  static writes = true
  static validator = vine.compile(vine.object({ ...bookFields }))

  async handle(input: { b_o?: string; b_c?: string }, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    await members.leave(actor, named.b_o, named.b_c)
    return { sstamp: await stamps.watermark() }
  }
}
