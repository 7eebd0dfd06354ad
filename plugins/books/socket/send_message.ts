import { SocketHandler, type SocketContext } from '#core/socket/socket_handler'
import { MessageType, flagOf, intOf, textOf, type Frame } from '#core/socket/protocol'
import { rpcError } from '#core/rpc/errors'
import messages from '../services/messages.js'

const invalid = (field: string, rule: string) =>
  rpcError('INVALID_PARAMETER', `Invalid parameter ${field}: ${rule}`, { field })

function text(frame: Frame, field: string) {
  const value = textOf(frame[field])
  if (value === null) throw invalid(field, 'must be a string')
  return value
}

function count(frame: Frame, field: string) {
  const value = intOf(frame[field])
  if (value !== undefined && (Number.isNaN(value) || value < 0))
    throw invalid(field, 'must be a non-negative integer')
  return value
}

/**
 * Send message (type 1, spec part 6): a new message (smid 0 and a client
 * uuid), an edit (smid > 0) or a delete (del true). The same
 * MessageService.send as sendMsg; the ack (type 2) leaves only once the write
 * has committed. The other members' sockets get the message as type 1 through
 * the books realtime binding (socket/realtime.ts).
 */
export default class SendMessage extends SocketHandler {
  static type = MessageType.SEND_MESSAGE
  static writes = true
  static area = 'messages' as const

  async handle(frame: Frame, ctx: SocketContext) {
    const del = flagOf(frame.del)
    if (frame.del !== undefined && frame.del !== null && frame.del !== '' && del === undefined) {
      throw invalid('del', 'must be a boolean')
    }
    const smid = count(frame, 'smid')
    const result = await messages.send(ctx.actor, {
      msg: text(frame, 'msg'),
      smid: smid && smid > 0 ? smid : undefined,
      b_o: text(frame, 'b_o')?.trim(),
      b_c: text(frame, 'b_c')?.trim(),
      body: text(frame, 'msgBody') ?? text(frame, 'body'),
      bodyHtml: text(frame, 'msgBodyHTML') ?? text(frame, 'bodyHtml'),
      nbMedias: count(frame, 'nbMedias'),
      nbDocs: count(frame, 'nbDocs'),
      event: frame.event,
      uuid: text(frame, 'uuid')?.trim() || undefined,
      msgColor: text(frame, 'msgColor'),
      del: del ?? false,
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
