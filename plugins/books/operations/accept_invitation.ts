import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import members from '../services/members.js'
import books from '../services/books.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { bookFields, bookOf } from '../validators/params.js'

/** acceptInvitation (extension; also a socket system message): an invitation (sent) becomes accepted. Accepting twice is not an error. */
export default class AcceptInvitation extends BaseOperation {
  static operation = 'acceptInvitation'
  static writes = true
  static validator = vine.compile(vine.object({ ...bookFields }))

  async handle(input: { b_o?: string; b_c?: string }, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    await members.accept(actor, named.b_o, named.b_c)
    return {
      sstamp: await stamps.watermark(),
      book: serializeBook(await books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
