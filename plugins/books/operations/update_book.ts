import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { BookService } from '../services/book_service.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { OWNER_PREF_KINDS } from '../models/prefs.js'
import { bookFields, bookOf, prefsField, prefsOf } from '../validators/params.js'

const validator = vine.compile(
  vine
    .object({
      ...bookFields,
      title: vine.string().trim().maxLength(191).optional(),
      description: vine.string().trim().maxLength(2000).optional(),
      ownerPrefs: prefsField(),
    })
    .allowUnknownProperties()
)

/** updateBook (extension): title, description and owner prefs (covers, ...); RIGHT_ADMIN. */
@inject()
export default class UpdateBook extends BaseOperation {
  static operation = 'updateBook'
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
    const ownerPrefs = prefsOf(input, 'ownerPrefs', OWNER_PREF_KINDS)
    if (ownerPrefs && input.title !== undefined) delete ownerPrefs.title
    await this.books.update(actor, named.b_o, named.b_c, {
      title: input.title,
      description: input.description,
      ownerPrefs,
    })
    return {
      sstamp: await this.stamps.watermark(),
      book: serializeBook(await this.books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
