import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, text } from '#core/rpc/wire'
import { BookTablesService } from '../services/book_tables_service.js'

const validator = vine.compile(
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

/** getBookTables: the book's smart-table container (no row content). */
@inject()
export default class GetBookTables extends BaseOperation {
  static operation = 'getBookTables'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private bookTables: BookTablesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.bookTables.bookTablesOf(ctx.actor, input)
  }
}
