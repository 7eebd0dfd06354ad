import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SystemMessageHandler, type SocketContext } from '#core/socket/socket_handler'
import { text } from '#core/rpc/wire'
import { BookAccessService } from '../services/book_access_service.js'
import { SystemMessageService } from '../services/system_message_service.js'
import { systemFrame, toBookMembers } from './system_broadcast.js'

const validator = vine.compile(vine.object({ b_o: text(), b_c: text() }))

/** acceptInvitation (b_o, b_c): the user joins the book; its members are told. */
@inject()
export default class AcceptInvitation extends SystemMessageHandler {
  static msg = 'acceptInvitation'
  static validator = validator

  constructor(
    private systemMessages: SystemMessageService,
    private access: BookAccessService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: SocketContext) {
    const { book } = await this.systemMessages.acceptInvitation(ctx.actor, input)
    await toBookMembers(
      ctx,
      this.access,
      book.id,
      systemFrame(AcceptInvitation.msg, ctx, { ...input, b_o: book.b_o, b_c: book.b_c })
    )
  }
}
