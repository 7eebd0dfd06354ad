import {
  SystemMessageHandler,
  type SocketContext,
  type SystemMessageFields,
} from '#core/socket/socket_handler'
import systemMessages from '../services/system_messages.js'
import { systemFrame, toBookMembers } from './system_broadcast.js'

/** acceptInvitation (b_o, b_c): the user joins the book; its members are told. */
export default class AcceptInvitation extends SystemMessageHandler {
  static msg = 'acceptInvitation'

  async handle(input: SystemMessageFields, ctx: SocketContext) {
    const { book } = await systemMessages.acceptInvitation(ctx.actor, input)
    await toBookMembers(
      ctx,
      book.id,
      systemFrame(AcceptInvitation.msg, ctx, { ...input, b_o: book.b_o, b_c: book.b_c })
    )
  }
}
