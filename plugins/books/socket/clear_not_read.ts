import {
  SystemMessageHandler,
  type SocketContext,
  type SystemMessageFields,
} from '#core/socket/socket_handler'
import systemMessages from '../services/system_messages.js'
import { systemFrame, toOwnDevices } from './system_broadcast.js'

/** clearNotRead (b_o, b_c): the book is read up to its newest message; the user's other devices clear their badge. */
export default class ClearNotRead extends SystemMessageHandler {
  static msg = 'clearNotRead'
  static area = 'messages' as const

  async handle(input: SystemMessageFields, ctx: SocketContext) {
    const { book } = await systemMessages.clearNotRead(ctx.actor, input)
    toOwnDevices(
      ctx,
      systemFrame(ClearNotRead.msg, ctx, { ...input, b_o: book.b_o, b_c: book.b_c })
    )
  }
}
