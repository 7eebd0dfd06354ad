import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SocketHandler, type SocketContext } from '#core/socket/socket_handler'
import { MessageType } from '#core/socket/protocol'
import { flag, looseText, stamp } from '#core/rpc/wire'
import { MessageService } from '../services/message_service.js'

/**
 * The frame's fields, with the rules sendMsg reads the same values with on
 * api.php (ids and counts are stamps, del a flag). `event` is read as
 * received (a JSON object, its text, or null to remove the event): the
 * events service checks it, for both entry points.
 */
const validator = vine.compile(
  vine.object({
    uuid: looseText().trim().optional(),
    smid: stamp().optional(),
    msg: looseText().optional(),
    del: flag().optional(),
    b_o: looseText().trim().optional(),
    b_c: looseText().trim().optional(),
    msgBody: looseText().optional(),
    body: looseText().optional(),
    msgBodyHTML: looseText().optional(),
    bodyHtml: looseText().optional(),
    nbMedias: stamp().optional(),
    nbDocs: stamp().optional(),
    event: vine.any().nullable().optional(),
    msgColor: looseText().optional(),
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
      body: input.msgBody ?? input.body,
      bodyHtml: input.msgBodyHTML ?? input.bodyHtml,
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
