import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { MessageService } from '../services/message_service.js'
import { bookFields } from '../validators/params.js'

const validator = vine.compile(
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
    // A JSON object, its text, bracket form, or null / "null" to remove the
    // event: read as received, EventService.parse checks it (as for socket type 1).
    event: vine.any().nullable().optional(),
  })
)

/**
 * sendMsg: a new message, or an edit with msg_id. The socket's send message
 * (type 1) calls the same MessageService.send.
 */
@inject()
export default class SendMsg extends BaseOperation {
  static operation = 'sendMsg'
  static writes = true
  static area = 'messages' as const
  static validator = validator

  constructor(private messages: MessageService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const result = await this.messages.send(ctx.actor!, {
      msg: input.msg,
      smid: input.msg_id,
      b_o: input.b_o,
      b_c: input.b_c,
      body: input.body,
      bodyHtml: input.bodyHtml ?? input.msgBodyHTML,
      nbMedias: input.nbMedias,
      nbDocs: input.nbDocs,
      event: input.event,
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
