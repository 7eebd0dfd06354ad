import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import books from '../services/books.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { OWNER_PREF_KINDS } from '../models/prefs.js'
import { bookFields, bookOf, prefsFrom } from '../validators/params.js'

/** updateBook (extension): title, description and owner prefs (covers, ...); RIGHT_ADMIN. */
export default class UpdateBook extends BaseOperation {
  static operation = 'updateBook'
  static writes = true
  static validator = vine.compile(
    vine.object({
      ...bookFields,
      title: vine.string().trim().maxLength(191).optional(),
      description: vine.string().trim().maxLength(2000).optional(),
    })
  )

  async handle(
    input: { b_o?: string; b_c?: string; title?: string; description?: string },
    ctx: OperationContext
  ) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    const ownerPrefs = prefsFrom(ctx.params, 'ownerPrefs', OWNER_PREF_KINDS)
    if (ownerPrefs && input.title !== undefined) delete ownerPrefs.title
    await books.update(actor, named.b_o, named.b_c, {
      title: input.title,
      description: input.description,
      ownerPrefs,
    })
    return {
      sstamp: await stamps.watermark(),
      book: serializeBook(await books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
