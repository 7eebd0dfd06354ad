import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SystemMessageHandler, type SocketContext } from '#core/socket/socket_handler'
import { text } from '#core/rpc/wire'
import { SystemMessageService } from '../services/system_message_service.js'
import { systemFrame, toOwnDevices } from './system_broadcast.js'

const validator = vine.compile(vine.object({ b_o: text(), b_c: text() }))

/** clearNotRead (b_o, b_c): the book is read up to its newest message; the user's other devices clear their badge. */
@inject()
export default class ClearNotRead extends SystemMessageHandler {
  static msg = 'clearNotRead'
  static area = 'messages' as const
  static validator = validator

  constructor(private systemMessages: SystemMessageService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: SocketContext) {
    const { book } = await this.systemMessages.clearNotRead(ctx.actor, input)
    toOwnDevices(
      ctx,
      systemFrame(ClearNotRead.msg, ctx, { ...input, b_o: book.b_o, b_c: book.b_c })
    )
  }
}
