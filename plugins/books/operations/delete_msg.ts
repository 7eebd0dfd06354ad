import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { MessageWriter } from '../services/message_writer.js'
import { bookFields } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...bookFields, msg_id: stamp() }))

/** deleteMsg: the creator (RIGHT_READWRITE) or anyone with RIGHT_READWRITEDELETE. */
@inject()
export default class DeleteMsg extends BaseOperation {
  static operation = 'deleteMsg'
  static writes = true
  static area = 'messages' as const
  static validator = validator

  constructor(private writer: MessageWriter) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const result = await this.writer.delete(ctx.actor!, {
      smid: input.msg_id,
      b_o: input.b_o,
      b_c: input.b_c,
    })
    return { sstamp: result.sstamp }
  }
}
