import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import messages from '../services/messages.js'
import { bookFields } from '../validators/params.js'

/**
 * sendMsg: a new message, or an edit with msg_id. The socket's send message
 * (type 1) calls the same MessageService.send.
 */
export default class SendMsg extends BaseOperation {
  static operation = 'sendMsg'
  static writes = true
  static area = 'messages' as const
  static validator = vine.compile(
    vine.object({
      ...bookFields,
      msg: vine.string().optional(),
      msg_id: stamp().optional(),
      body: vine.string().optional(),
      bodyHtml: vine.string().optional(),
      msgBodyHTML: vine.string().optional(),
      nbMedias: stamp().optional(),
      nbDocs: stamp().optional(),
      uuid: vine.string().trim().optional(),
      uid: vine.string().trim().optional(),
      msgType: vine.string().trim().optional(),
      msgMethod: vine.string().trim().optional(),
      msgColor: vine.string().trim().optional(),
    })
  )

  async handle(
    input: {
      b_o?: string
      b_c?: string
      msg?: string
      msg_id?: number
      body?: string
      bodyHtml?: string
      msgBodyHTML?: string
      nbMedias?: number
      nbDocs?: number
      uuid?: string
      uid?: string
      msgType?: string
      msgMethod?: string
      msgColor?: string
    },
    ctx: OperationContext
  ) {
    const result = await messages.send(ctx.actor!, {
      msg: input.msg,
      smid: input.msg_id,
      b_o: input.b_o,
      b_c: input.b_c,
      body: input.body,
      bodyHtml: input.bodyHtml ?? input.msgBodyHTML,
      nbMedias: input.nbMedias,
      nbDocs: input.nbDocs,
      // `event` is a JSON string or, in bracket form, an object: read it unvalidated.
      event: ctx.params.event,
      // The test form of the live product labels the custom uuid `uid`.
      uuid: input.uuid || input.uid,
      msgType: input.msgType,
      msgMethod: input.msgMethod,
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
