import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { BookService } from '../services/book_service.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { bookFields, bookOf } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...bookFields }))

/** archiveBook (extension): RIGHT_ADMIN; an archived book stays readable, and only unarchiveBook changes it. */
@inject()
export default class ArchiveBook extends BaseOperation {
  static operation = 'archiveBook'
  static writes = true
  static validator = validator

  constructor(
    private books: BookService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    await this.books.setArchived(actor, named.b_o, named.b_c, true)
    return {
      sstamp: await this.stamps.watermark(),
      book: serializeBook(await this.books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
