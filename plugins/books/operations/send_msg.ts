import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type Actor, type OperationContext } from '#core/rpc/base_operation'
import { looseText, stamp } from '#core/rpc/wire'
import { MessageService } from '../services/message_service.js'
import { messageBodies, messageFields } from '../validators/params.js'

/**
 * The message's fields are read by the rules the socket's send message (type 1) reads them with
 * (messageFields, one fragment for both); msg_id, uid, msgType and msgMethod are api.php's own.
 */
const validator = vine.compile(
  vine.object({
    ...messageFields,
    msg_id: stamp().optional(),
    uid: looseText().trim().optional(),
    msgType: looseText().trim().optional(),
    msgMethod: looseText().trim().optional(),
  })
)

/**
 * A gateway's SMS names its book by its first word (4.A.3 sendMsg, b_c), which
 * is not part of the message; a b_c given, or a gateway fixed to one book,
 * leaves the text whole.
 */
export function withoutBookWord(input: { msg?: string; b_c?: string }, actor: Actor) {
  const word = /^\s*(\S+)\s*([\s\S]*)$/.exec(input.msg ?? '')
  if (input.b_c || actor.restrictions.carnet_code || !word) return input
  return { b_c: word[1], msg: word[2] }
}

/**
 * sendMsg: a new message, or an edit with msg_id. The socket's send message
 * (type 1) calls the same MessageService.send. An SMS gateway's sesskey may
 * call it too (spec 5.A.6): the actor is then the sender u_c names (the
 * gateways plugin resolves it), and the message is marked msgMethod `_sms`.
 */
@inject()
export default class SendMsg extends BaseOperation {
  static operation = 'sendMsg'
  static auth = 'session_or_gateway' as const
  static writes = true
  static area = 'messages' as const
  static validator = validator

  constructor(private messages: MessageService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const target = ctx.gateway ? withoutBookWord(input, ctx.actor!) : input
    const result = await this.messages.send(ctx.actor!, {
      msg: target.msg,
      smid: input.msg_id,
      b_o: input.b_o,
      b_c: target.b_c,
      ...messageBodies(input),
      nbMedias: input.nbMedias,
      nbDocs: input.nbDocs,
      event: input.event,
      // The test form of the live product labels the custom uuid `uid`.
      uuid: input.uuid || input.uid,
      msgType: input.msgType,
      msgMethod: input.msgMethod ?? (ctx.gateway ? '_sms' : undefined),
      msgColor: input.msgColor,
    })
    return {
      sstamp: result.sstamp,
      createMessageId: result.smid,
      created: result.created,
      uuid: result.uuid,
    }
  }
}
