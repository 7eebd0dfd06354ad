import {
  SystemMessageHandler,
  type SocketContext,
  type SystemMessageFields,
} from '#core/socket/socket_handler'
import systemMessages from '../services/system_messages.js'
import bookAccess from '../services/book_access.js'
import { OWNER_PREF_KINDS } from '../models/prefs.js'
import { systemFrame, toBookMembers, toOwnDevices } from './system_broadcast.js'

/**
 * updateBookParam (b_o, b_c, param, value): a member's own book parameter
 * (userPrefs, favorite, order) goes to the user's other devices; a book-wide
 * one (ownerPrefs, description, by an administrator) to every member.
 */
export default class UpdateBookParam extends SystemMessageHandler {
  static msg = 'updateBookParam'

  async handle(input: SystemMessageFields, ctx: SocketContext) {
    await systemMessages.updateBookParam(ctx.actor, input)
    const frame = systemFrame(UpdateBookParam.msg, ctx, input)
    const param = input.param ?? ''
    if (param in OWNER_PREF_KINDS || param === 'description') {
      const book = await bookAccess.resolve(input.b_o ?? '', input.b_c ?? '')
      if (book) await toBookMembers(ctx, book.id, frame)
    } else {
      toOwnDevices(ctx, frame)
    }
  }
}
