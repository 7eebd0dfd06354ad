import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import books from '../services/books.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { bookFields, bookOf } from '../validators/params.js'

/** archiveBook (extension): RIGHT_ADMIN; an archived book stays readable, and only unarchiveBook changes it. */
export default class ArchiveBook extends BaseOperation {
  static operation = 'archiveBook'
  static writes = true
  static validator = vine.compile(vine.object({ ...bookFields }))

  async handle(input: { b_o?: string; b_c?: string }, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    await books.setArchived(actor, named.b_o, named.b_c, true)
    return {
      sstamp: await stamps.watermark(),
      book: serializeBook(await books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
