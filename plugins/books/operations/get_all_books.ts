import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { StampService } from '#core/services/stamp_service'
import { BookService } from '../services/book_service.js'
import { serializeBook, serializeContact } from '../serializers/book_serializer.js'
import { bookFields } from '../validators/params.js'

const validator = vine.compile(vine.object({ sstamp: stamp().optional(), ...bookFields }))

/**
 * The user's books, contacts and counts. With sstamp: only books changed
 * since (a book left or lost comes back with del true) and contacts changed
 * since; nbBooks and nbContacts stay totals. b_c / b_o keep one book.
 */
@inject()
export default class GetAllBooks extends BaseOperation {
  static operation = 'getAllBooks'
  static validator = validator

  constructor(
    private books: BookService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const sstamp = await this.stamps.watermark()
    const listing = await this.books.listFor(ctx.actor!, input)
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
