import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, text } from '#core/rpc/schema'
import bookAccess from '#plugins/books/services/book_access'
import { structureService } from '../services/structure_service.js'

/** createTable (extension): a new category with a default view and tab; optional initial fields. */
export default class CreateTable extends BaseOperation {
  static operation = 'createTable'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: text(),
      b_c: text(),
      name: text(),
      description: vine.string().optional(),
      code: vine.string().optional(),
      fields: vine.any().optional(),
      public: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const book = await bookAccess.resolveFor(ctx.actor!, input.b_o, input.b_c, 'admin')
    const created = await structureService.createTable(ctx.actor!, book, {
      name: input.name,
      description: input.description,
      code: input.code,
      fields: input.fields,
      isPublic: input.public,
    })
    return { catId: created.categoryId, viewId: created.viewId, tabId: created.tabId }
  }
}
