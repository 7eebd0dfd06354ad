import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { BookService } from '../services/book_service.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { bookFields, bookOf } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...bookFields }))

/** One book the user is invited to or a member of, as getAllBooks answers it. */
@inject()
export default class GetBookInfo extends BaseOperation {
  static operation = 'getBookInfo'
  static validator = validator

  constructor(
    private books: BookService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const sstamp = await this.stamps.watermark()
    const named = bookOf(ctx.actor!, input)
    const book = await this.books.infoFor(ctx.actor!, named.b_o, named.b_c)
    return { sstamp, book: serializeBook(book) }
  }
}
