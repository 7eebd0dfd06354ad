import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, int } from '#core/rpc/wire'
import { StampService } from '#core/services/stamp_service'
import { BookService } from '../services/book_service.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { USER_PREF_KINDS } from '../models/prefs.js'
import { bookFields, bookOf, prefsField, prefsOf } from '../validators/params.js'

const validator = vine.compile(
  vine
    .object({
      ...bookFields,
      favorite: flag().optional(),
      order: int().optional(),
      userPrefs: prefsField(),
    })
    .allowUnknownProperties()
)

/**
 * updateBookUserPrefs (extension): the member's own prefs of a book
 * (`userPrefs` as JSON or bracket form, or top-level keys such as
 * maxMsgsOffline), `favorite` and `order`. Needs only membership.
 */
@inject()
export default class UpdateBookUserPrefs extends BaseOperation {
  static operation = 'updateBookUserPrefs'
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
    await this.books.updateUserPrefs(actor, named.b_o, named.b_c, {
      userPrefs: prefsOf(input, 'userPrefs', USER_PREF_KINDS, ['syncWithHubic']),
      favorite: input.favorite,
      order: input.order,
    })
    return {
      sstamp: await this.stamps.watermark(),
      book: serializeBook(await this.books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
