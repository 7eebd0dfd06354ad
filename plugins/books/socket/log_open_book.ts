import {
  SystemMessageHandler,
  type SocketContext,
  type SystemMessageFields,
} from '#core/socket/socket_handler'
import systemMessages from '../services/system_messages.js'
import { systemFrame, toOwnDevices } from './system_broadcast.js'

/** logOpenBook (b_o, b_c): records the opening (not synced data); the user's other devices are told. */
export default class LogOpenBook extends SystemMessageHandler {
  static msg = 'logOpenBook'
  // A log of reading: allowed to read-only sessions.
  static writes = false

  async handle(input: SystemMessageFields, ctx: SocketContext) {
    const { book } = await systemMessages.logOpenBook(ctx.actor, input)
    toOwnDevices(ctx, systemFrame(LogOpenBook.msg, ctx, { ...input, b_o: book.b_o, b_c: book.b_c }))
  }
}
