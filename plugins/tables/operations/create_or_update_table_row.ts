import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, object, stamp, text } from '#core/rpc/wire'
import { RowsService } from '../services/rows_service.js'
import { ownerField, unlockField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    ...unlockField,
    rowId: text(),
    fieldValues: object().optional(),
    catId: stamp().optional(),
    view_id: vine.any().optional(),
    tab_id: vine.any().optional(),
    linkSeparator: vine.string().optional(),
    bypassUrlTrigger: flag().optional(),
  })
)

/** createOrUpdateTableRow: one row; answers `rows` with exactly one element carrying the real id. */
@inject()
export default class CreateOrUpdateTableRow extends BaseOperation {
  static operation = 'createOrUpdateTableRow'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private rows: RowsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const result = await this.rows.writeRow(ctx.actor!, input)
    return {
      catId: result.categoryId,
      newRows: result.newRows,
      rows: result.rows.slice(0, 1),
      formLastModified: result.formLastModified,
    }
  }
}
