import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import books from '../services/books.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { bookFields, bookOf } from '../validators/params.js'

/** One book the user is invited to or a member of, as getAllBooks answers it. */
export default class GetBookInfo extends BaseOperation {
  static operation = 'getBookInfo'
  static validator = vine.compile(vine.object({ ...bookFields }))

  async handle(input: { b_o?: string; b_c?: string }, ctx: OperationContext) {
    const sstamp = await stamps.watermark()
    const named = bookOf(ctx.actor!, input)
    return { sstamp, book: serializeBook(await books.infoFor(ctx.actor!, named.b_o, named.b_c)) }
  }
}
