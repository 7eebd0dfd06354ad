import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { flag, text } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import bookAccess from '#plugins/books/services/book_access'
import { valuesService } from '../services/values_service.js'

/** getBookTables: the book's smart-table container (no row content). */
export default class GetBookTables extends BaseOperation {
  static operation = 'getBookTables'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: text(),
      b_c: text(),
      externViews: flag().optional(),
      format: vine.string().optional(),
      includeFields: flag().optional(),
      includeEnums: flag().optional(),
      getRowIds: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const book = await bookAccess.resolve(input.b_o, input.b_c)
    if (!book) throw rpcError('NOT_FOUND', 'Book not found')
    // Watermark before reading (the kernel's sync rule).
    const sstamp = await stamps.watermark()
    const bookTables = await valuesService.bookTables(ctx.actor, book, {
      includeFields: input.includeFields ?? false,
      includeEnums: input.includeEnums ?? true,
      android: input.format === 'android',
      getRowIds: input.getRowIds ?? false,
      externViews: input.externViews ?? false,
    })
    return { sstamp, bookTables }
  }
}
