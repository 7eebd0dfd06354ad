import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import bookAccess from '../services/book_access.js'
import messages from '../services/messages.js'
import { bookFields, bookOf } from '../validators/params.js'

/** The five rules of 4.A.3 are implemented by MessageService.list; the array is answered as bookMessages. */
export default class GetBookMessages extends BaseOperation {
  static operation = 'getBookMessages'
  static area = 'messages' as const
  static validator = vine.compile(
    vine.object({
      ...bookFields,
      sstamp: stamp().optional(),
      smidFirst: stamp().optional(),
      smidLast: stamp().optional(),
      nbMax: stamp().optional(),
      page: stamp().optional(),
      search_string: vine.string().optional(),
    })
  )

  async handle(
    input: {
      b_o?: string
      b_c?: string
      sstamp?: number
      smidFirst?: number
      smidLast?: number
      nbMax?: number
      page?: number
      search_string?: string
    },
    ctx: OperationContext
  ) {
    const sstamp = await stamps.watermark()
    const named = bookOf(ctx.actor!, input)
    const book = await bookAccess.resolveFor(ctx.actor!, named.b_o, named.b_c, 'read')
    const bookMessages = await messages.list(book, {
      nbMax: input.nbMax,
      page: input.page,
      // 0 is what clients send when they hold nothing yet: no bound.
      smidFirst: input.smidFirst || undefined,
      smidLast: input.smidLast || undefined,
      sstamp: input.sstamp,
      search: input.search_string,
    })
    return { sstamp, b_c: book.b_c, b_o: book.b_o, bookMessages }
  }
}
