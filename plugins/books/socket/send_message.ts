import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SocketHandler, type SocketContext } from '#core/socket/socket_handler'
import { MessageType } from '#core/socket/protocol'
import { flag, stamp } from '#core/rpc/wire'
import { MessageService } from '../services/message_service.js'
import { messageBodies, messageFields } from '../validators/params.js'

/**
 * The message's fields are read by the rules sendMsg reads them with on api.php (messageFields,
 * one fragment for both); smid (0 for a new message) and del are the frame's own.
 */
const validator = vine.compile(
  vine.object({
    ...messageFields,
    smid: stamp().optional(),
    del: flag().optional(),
  })
)

/**
 * Send message (type 1, docs/spec/service-interface.md part 6): a new message (smid 0 and a client
 * uuid), an edit (smid > 0) or a delete (del true). The same
 * MessageService.send as sendMsg; the ack (type 2) leaves only once the write
 * has committed. The other members' sockets get the message as type 1 through
 * the books realtime binding (socket/realtime.ts).
 */
@inject()
export default class SendMessage extends SocketHandler {
  static type = MessageType.SEND_MESSAGE
  static writes = true
  static area = 'messages' as const
  static validator = validator

  constructor(private messages: MessageService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: SocketContext) {
    const result = await this.messages.send(ctx.actor, {
      msg: input.msg,
      smid: input.smid && input.smid > 0 ? input.smid : undefined,
      b_o: input.b_o,
      b_c: input.b_c,
      ...messageBodies(input),
      nbMedias: input.nbMedias,
      nbDocs: input.nbDocs,
      event: input.event,
      uuid: input.uuid || undefined,
      msgColor: input.msgColor,
      del: input.del ?? false,
    })
    return {
      type: MessageType.ACK_MESSAGE,
      status: 'ok',
      uuid: result.uuid,
      smid: result.smid,
      sstamp: result.sstamp,
      created: result.created,
      del: result.del,
      b_o: result.book.b_o,
      b_c: result.book.b_c,
    }
  }
}
