import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, text } from '#core/rpc/wire'
import { RowsService } from '../services/rows_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    rowId: text(),
    bypassUrlTrigger: flag().optional(),
  })
)

/** deleteTableRow: answers formLastModified, the row id, and tmpId when the client sent a temporary id. */
@inject()
export default class DeleteTableRow extends BaseOperation {
  static operation = 'deleteTableRow'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private rows: RowsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.rows.deleteRow(ctx.actor!, input)
  }
}
