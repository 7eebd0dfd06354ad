import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp, text } from '#core/rpc/schema'
import { rowsService } from '../services/rows_service.js'
import { asObject } from '../services/wire.js'

/** createOrUpdateTableRow: one row; answers `rows` with exactly one element carrying the real id. */
export default class CreateOrUpdateTableRow extends BaseOperation {
  static operation = 'createOrUpdateTableRow'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      rowId: text(),
      fieldValues: vine.any().optional(),
      catId: stamp().optional(),
      view_id: vine.any().optional(),
      tab_id: vine.any().optional(),
      linkSeparator: vine.string().optional(),
      bypassUrlTrigger: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const values = asObject(input.fieldValues, 'fieldValues')
    const result = await rowsService.write(ctx.actor!, [{ key: input.rowId, values }], {
      categoryId: input.catId || undefined,
      b_o: input.b_o,
      linkSeparator: input.linkSeparator,
      bypassUrlTrigger: input.bypassUrlTrigger,
    })
    return {
      catId: result.categoryId,
      newRows: result.newRows,
      rows: result.rows.slice(0, 1),
      formLastModified: result.formLastModified,
    }
  }
}
