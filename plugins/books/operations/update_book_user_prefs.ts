import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, int } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import books from '../services/books.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { USER_PREF_KINDS } from '../models/prefs.js'
import { bookFields, bookOf, prefsFrom } from '../validators/params.js'

/**
 * updateBookUserPrefs (extension): the member's own prefs of a book
 * (`userPrefs` as JSON or bracket form, or top-level keys such as
 * maxMsgsOffline), `favorite` and `order`. Needs only membership.
 */
export default class UpdateBookUserPrefs extends BaseOperation {
  static operation = 'updateBookUserPrefs'
  static writes = true
  static validator = vine.compile(
    vine.object({ ...bookFields, favorite: flag().optional(), order: int().optional() })
  )

  async handle(
    input: { b_o?: string; b_c?: string; favorite?: boolean; order?: number },
    ctx: OperationContext
  ) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    const userPrefs = prefsFrom(ctx.params, 'userPrefs', USER_PREF_KINDS, ['syncWithHubic'])
    await books.updateUserPrefs(actor, named.b_o, named.b_c, {
      userPrefs,
      favorite: input.favorite,
      order: input.order,
    })
    return {
      sstamp: await stamps.watermark(),
      book: serializeBook(await books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
