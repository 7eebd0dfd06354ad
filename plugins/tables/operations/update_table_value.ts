import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp, text } from '#core/rpc/schema'
import { rowsService } from '../services/rows_service.js'

/** updateTableValue: one cell; a rowId starting with `tmp` creates a row in the field's table. */
export default class UpdateTableValue extends BaseOperation {
  static operation = 'updateTableValue'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      rowId: text(),
      fieldId: stamp(),
      value: vine.any().optional(),
      bypassUrlTrigger: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const result = await rowsService.updateValue(ctx.actor!, {
      rowId: input.rowId,
      fieldId: input.fieldId,
      value: input.value ?? '',
      b_o: input.b_o,
      bypassUrlTrigger: input.bypassUrlTrigger,
    })
    return result.newRows.length ? { newRows: result.newRows } : {}
  }
}
