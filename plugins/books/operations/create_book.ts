import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { BookService } from '../services/book_service.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { OWNER_PREF_KINDS } from '../models/prefs.js'
import { prefsField, prefsOf } from '../validators/params.js'

const validator = vine.compile(
  vine
    .object({
      b_c: vine.string().trim().minLength(1),
      title: vine.string().trim().maxLength(191).optional(),
      description: vine.string().trim().maxLength(2000).optional(),
      ownerPrefs: prefsField(),
    })
    .allowUnknownProperties()
)

/**
 * createBook (extension): a book owned by u_c, who becomes its first member
 * with right 4. title defaults to b_c; owner prefs as `ownerPrefs` (JSON or
 * bracket form) or as top-level parameters.
 */
@inject()
export default class CreateBook extends BaseOperation {
  static operation = 'createBook'
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
    const ownerPrefs = prefsOf(input, 'ownerPrefs', OWNER_PREF_KINDS)
    if (ownerPrefs) delete ownerPrefs.title
    const book = await this.books.create(actor, {
      b_c: input.b_c,
      title: input.title,
      description: input.description,
      ownerPrefs,
    })
    return {
      sstamp: await this.stamps.watermark(),
      book: serializeBook(await this.books.infoFor(actor, book.b_o, book.b_c)),
    }
  }
}
