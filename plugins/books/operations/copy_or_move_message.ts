import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp } from '#core/rpc/schema'
import { rpcError } from '#core/rpc/errors'
import bookAccess from '../services/book_access.js'
import messages from '../services/messages.js'
import { bookFields } from '../validators/params.js'

/**
 * copyOrMoveMessage (parameters not shown by the spec): msg_id (and
 * optionally its b_o/b_c) names the message; to_b_c / to_b_o (aliases
 * target_b_c / target_b_o; to_b_o defaults to u_c) the target book; move=1
 * (or action=move) moves instead of copying.
 */
export default class CopyOrMoveMessage extends BaseOperation {
  static operation = 'copyOrMoveMessage'
  static writes = true
  static area = 'messages' as const
  static validator = vine.compile(
    vine.object({
      ...bookFields,
      msg_id: stamp(),
      to_b_o: vine.string().trim().optional(),
      to_b_c: vine.string().trim().optional(),
      target_b_o: vine.string().trim().optional(),
      target_b_c: vine.string().trim().optional(),
      move: flag().optional(),
      action: vine.enum(['copy', 'move']).optional(),
    })
  )

  async handle(
    input: {
      b_o?: string
      b_c?: string
      msg_id: number
      to_b_o?: string
      to_b_c?: string
      target_b_o?: string
      target_b_c?: string
      move?: boolean
      action?: 'copy' | 'move'
    },
    ctx: OperationContext
  ) {
    const actor = ctx.actor!
    const targetCode = input.to_b_c || input.target_b_c
    if (!targetCode)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: to_b_c', { field: 'to_b_c' })
    const targetOwner = input.to_b_o || input.target_b_o || actor.user.code
    const target = await bookAccess.resolveFor(actor, targetOwner, targetCode, 'write')
    const result = await messages.copyOrMove(actor, {
      smid: input.msg_id,
      b_o: input.b_o,
      b_c: input.b_c,
      target,
      move: input.move ?? input.action === 'move',
    })
    return {
      sstamp: result.sstamp,
      createMessageId: result.smid,
      uuid: result.uuid,
      b_o: target.b_o,
      b_c: target.b_c,
    }
  }
}
