import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import books from '../services/books.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { OWNER_PREF_KINDS } from '../models/prefs.js'
import { prefsFrom } from '../validators/params.js'

/**
 * createBook (extension): a book owned by u_c, who becomes its first member
 * with right 4. title defaults to b_c; owner prefs as `ownerPrefs` (JSON or
 * bracket form) or as top-level parameters.
 */
export default class CreateBook extends BaseOperation {
  static operation = 'createBook'
  static writes = true
  static validator = vine.compile(
    vine.object({
      b_c: vine.string().trim().minLength(1),
      title: vine.string().trim().maxLength(191).optional(),
      description: vine.string().trim().maxLength(2000).optional(),
    })
  )

  async handle(
    input: { b_c: string; title?: string; description?: string },
    ctx: OperationContext
  ) {
    const actor = ctx.actor!
    const ownerPrefs = prefsFrom(ctx.params, 'ownerPrefs', OWNER_PREF_KINDS)
    if (ownerPrefs) delete ownerPrefs.title
    const book = await books.create(actor, { ...input, ownerPrefs })
    return {
      sstamp: await stamps.watermark(),
      book: serializeBook(await books.infoFor(actor, book.b_o, book.b_c)),
    }
  }
}
