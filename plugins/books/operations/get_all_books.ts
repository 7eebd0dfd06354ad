import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import books from '../services/books.js'
import { serializeBook, serializeContact } from '../serializers/book_serializer.js'
import { bookFields } from '../validators/params.js'

/**
 * The user's books, contacts and counts. With sstamp: only books changed
 * since (a book left or lost comes back with del true) and contacts changed
 * since; nbBooks and nbContacts stay totals. b_c / b_o keep one book.
 */
export default class GetAllBooks extends BaseOperation {
  static operation = 'getAllBooks'
  static validator = vine.compile(vine.object({ sstamp: stamp().optional(), ...bookFields }))

  async handle(input: { sstamp?: number; b_o?: string; b_c?: string }, ctx: OperationContext) {
    const sstamp = await stamps.watermark()
    const listing = await books.listFor(ctx.actor!, input)
    return {
      sstamp,
      allBooks: {
        nbBooks: listing.nbBooks,
        nbContacts: listing.nbContacts,
        contacts: listing.contacts.map(serializeContact),
        books: listing.books.map(serializeBook),
      },
    }
  }
}
