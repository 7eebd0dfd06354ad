import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { flag, stamp } from '#core/rpc/schema'
import { rowsService } from '../services/rows_service.js'
import { asObject } from '../services/wire.js'

/** createOrUpdateTableRows: `rows` {rowId: {fieldId: value}} (JSON or bracket form); tmp ids create rows. */
export default class CreateOrUpdateTableRows extends BaseOperation {
  static operation = 'createOrUpdateTableRows'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      rows: vine.any(),
      catId: stamp().optional(),
      view_id: vine.any().optional(),
      tab_id: vine.any().optional(),
      linkSeparator: vine.string().optional(),
      bypassUrlTrigger: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const rows = asObject(input.rows, 'rows')
    const writes = Object.entries(rows).map(([key, values]) => ({
      key,
      values: asObject(values, `rows[${key}]`),
    }))
    if (writes.length === 0) throw rpcError('MISSING_PARAMETER', 'Missing parameter: rows')
    const result = await rowsService.write(ctx.actor!, writes, {
      categoryId: input.catId || undefined,
      b_o: input.b_o,
      linkSeparator: input.linkSeparator,
      bypassUrlTrigger: input.bypassUrlTrigger,
    })
    return {
      catId: result.categoryId,
      modified: result.modified,
      created: result.created,
      newRows: result.newRows,
    }
  }
}
