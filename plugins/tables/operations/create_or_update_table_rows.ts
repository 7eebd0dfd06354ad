import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, object, stamp } from '#core/rpc/wire'
import { RowsService } from '../services/rows_service.js'
import { ownerField, unlockField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    ...unlockField,
    rows: object(),
    catId: stamp().optional(),
    view_id: vine.any().optional(),
    tab_id: vine.any().optional(),
    linkSeparator: vine.string().optional(),
    bypassUrlTrigger: flag().optional(),
  })
)

/** createOrUpdateTableRows: `rows` {rowId: {fieldId: value}} (JSON or bracket form); tmp ids create rows. */
@inject()
export default class CreateOrUpdateTableRows extends BaseOperation {
  static operation = 'createOrUpdateTableRows'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private rows: RowsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const result = await this.rows.writeRows(ctx.actor!, input)
    return {
      catId: result.categoryId,
      modified: result.modified,
      created: result.created,
      newRows: result.newRows,
    }
  }
}
