import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import messages from '../services/messages.js'
import { bookFields } from '../validators/params.js'

/** deleteMsg: the creator (RIGHT_READWRITE) or anyone with RIGHT_READWRITEDELETE. */
export default class DeleteMsg extends BaseOperation {
  static operation = 'deleteMsg'
  static writes = true
  static area = 'messages' as const
  static validator = vine.compile(vine.object({ ...bookFields, msg_id: stamp() }))

  async handle(input: { b_o?: string; b_c?: string; msg_id: number }, ctx: OperationContext) {
    const result = await messages.delete(ctx.actor!, {
      smid: input.msg_id,
      b_o: input.b_o,
      b_c: input.b_c,
    })
    return { sstamp: result.sstamp }
  }
}
