import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import members from '../services/members.js'
import { bookFields, bookOf } from '../validators/params.js'

/** declineInvitation (extension): a pending invitation is dropped; the book leaves the user's list (del true in a delta). */
export default class DeclineInvitation extends BaseOperation {
  static operation = 'declineInvitation'
  static writes = true
  static validator = vine.compile(vine.object({ ...bookFields }))

  async handle(input: { b_o?: string; b_c?: string }, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    await members.decline(actor, named.b_o, named.b_c)
    return { sstamp: await stamps.watermark() }
  }
}
