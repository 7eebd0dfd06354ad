import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SystemMessageHandler, type SocketContext } from '#core/socket/socket_handler'
import { text } from '#core/rpc/wire'
import { SystemMessageService } from '../services/system_message_service.js'
import { systemFrame, toOwnDevices } from './system_broadcast.js'

const validator = vine.compile(vine.object({ b_o: text(), b_c: text() }))

/** logOpenBook (b_o, b_c): records the opening (not synced data); the user's other devices are told. */
@inject()
export default class LogOpenBook extends SystemMessageHandler {
  static msg = 'logOpenBook'
  // A log of reading: allowed to read-only sessions.
  static writes = false
  static validator = validator

  constructor(private systemMessages: SystemMessageService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: SocketContext) {
    const { book } = await this.systemMessages.logOpenBook(ctx.actor, input)
    toOwnDevices(ctx, systemFrame(LogOpenBook.msg, ctx, { ...input, b_o: book.b_o, b_c: book.b_c }))
  }
}
