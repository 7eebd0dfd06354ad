import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp } from '#core/rpc/wire'
import { MessageTransfer } from '../services/message_transfer.js'
import { bookFields } from '../validators/params.js'

const validator = vine.compile(
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

/**
 * copyOrMoveMessage (parameters not shown by the spec): msg_id (and
 * optionally its b_o/b_c) names the message; to_b_c / to_b_o (aliases
 * target_b_c / target_b_o; to_b_o defaults to u_c) the target book; move=1
 * (or action=move) moves instead of copying.
 */
@inject()
export default class CopyOrMoveMessage extends BaseOperation {
  static operation = 'copyOrMoveMessage'
  static writes = true
  static area = 'messages' as const
  static validator = validator

  constructor(private transfer: MessageTransfer) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const result = await this.transfer.copyOrMove(ctx.actor!, {
      smid: input.msg_id,
      b_o: input.b_o,
      b_c: input.b_c,
      to_b_o: input.to_b_o || input.target_b_o,
      to_b_c: input.to_b_c || input.target_b_c,
      move: input.move ?? input.action === 'move',
    })
    return {
      sstamp: result.sstamp,
      createMessageId: result.smid,
      uuid: result.uuid,
      b_o: result.book.b_o,
      b_c: result.book.b_c,
    }
  }
}
