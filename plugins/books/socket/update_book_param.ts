import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SystemMessageHandler, type SocketContext } from '#core/socket/socket_handler'
import { text } from '#core/rpc/wire'
import { BookAccessService } from '../services/book_access_service.js'
import { SystemMessageService } from '../services/system_message_service.js'
import { OWNER_PREF_KINDS } from '../models/prefs.js'
import { systemFrame, toBookMembers, toOwnDevices } from './system_broadcast.js'

/** `value` is read as received (its type depends on param): the service checks it. */
const validator = vine.compile(
  vine.object({
    b_o: text(),
    b_c: text(),
    param: text(),
    value: vine.any().nullable().optional(),
  })
)

/**
 * updateBookParam (b_o, b_c, param, value): a member's own book parameter
 * (userPrefs, favorite, order) goes to the user's other devices; a book-wide
 * one (ownerPrefs, description, by an administrator) to every member.
 */
@inject()
export default class UpdateBookParam extends SystemMessageHandler {
  static msg = 'updateBookParam'
  static validator = validator

  constructor(
    private systemMessages: SystemMessageService,
    private access: BookAccessService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: SocketContext) {
    await this.systemMessages.updateBookParam(ctx.actor, input)
    const frame = systemFrame(UpdateBookParam.msg, ctx, input)
    if (input.param in OWNER_PREF_KINDS || input.param === 'description') {
      const book = await this.access.resolve(input.b_o, input.b_c)
      if (book) await toBookMembers(ctx, this.access, book.id, frame)
    } else {
      toOwnDevices(ctx, frame)
    }
  }
}
