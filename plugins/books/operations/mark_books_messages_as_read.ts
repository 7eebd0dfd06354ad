import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { stamp } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import bookAccess from '../services/book_access.js'
import books from '../services/books.js'
import messages from '../services/messages.js'
import { listParam } from '../services/event_service.js'
import { bookFields, bookOf } from '../validators/params.js'

/**
 * markBooksMessagesAsRead (parameters not shown by the spec): one book
 * (b_o, b_c, optional smid = read up to that message), several (`books`: a
 * JSON array of {b_o, b_c} or of "b_o/b_c" strings), or, with neither, every
 * book of the user (a restricted session: its book).
 */
export default class MarkBooksMessagesAsRead extends BaseOperation {
  static operation = 'markBooksMessagesAsRead'
  static writes = true
  static area = 'messages' as const
  static validator = vine.compile(vine.object({ ...bookFields, smid: stamp().optional() }))

  async handle(input: { b_o?: string; b_c?: string; smid?: number }, ctx: OperationContext) {
    const actor = ctx.actor!
    let targets: { b_o: string; b_c: string }[]
    const listed = listParam(ctx.params.books)
    if (input.b_c || actor.restrictions.carnet_code) {
      targets = [bookOf(actor, input)]
    } else if (listed.length > 0) {
      targets = listed.map((item) => {
        if (item && typeof item === 'object') {
          const entry = item as Record<string, unknown>
          return bookOf(actor, {
            b_o: String(entry.b_o ?? '').trim(),
            b_c: String(entry.b_c ?? '').trim(),
          })
        }
        const [owner, code] = String(item).split('/')
        if (!code)
          throw rpcError(
            'INVALID_PARAMETER',
            'Invalid parameter books: expected {b_o, b_c} or "b_o/b_c"',
            { field: 'books' }
          )
        return { b_o: owner.trim(), b_c: code.trim() }
      })
    } else {
      const listing = await books.listFor(actor, {})
      targets = listing.books
        .filter((view) => view.member.invite === 'accepted')
        .map((view) => ({ b_o: view.ownerCode, b_c: view.book.code }))
    }

    const marked = []
    for (const target of targets) {
      const book = await bookAccess.resolveFor(actor, target.b_o, target.b_c, 'read')
      const { lastMsgRead } = await messages.markRead(
        actor,
        book,
        targets.length === 1 ? input.smid : undefined
      )
      marked.push({ b_o: book.b_o, b_c: book.b_c, lastMsgRead })
    }
    return { sstamp: await stamps.watermark(), books: marked }
  }
}
