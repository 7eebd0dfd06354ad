import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { flag, text } from '#core/rpc/schema'
import { rowsService } from '../services/rows_service.js'

/** deleteTableRow: answers formLastModified, the row id, and tmpId when the client sent a temporary id. */
export default class DeleteTableRow extends BaseOperation {
  static operation = 'deleteTableRow'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      rowId: text(),
      bypassUrlTrigger: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const rowId = String(input.rowId).trim()
    // A row that never reached the server: nothing to delete, the client marks it synced.
    if (rowId.startsWith('tmp'))
      return { formLastModified: Math.floor(Date.now() / 1000), id: null, tmpId: rowId }
    if (!/^\d+$/.test(rowId))
      throw rpcError('INVALID_PARAMETER', `Invalid parameter rowId: "${rowId}"`)
    const result = await rowsService.deleteRows(ctx.actor!, [Number(rowId)], {
      b_o: input.b_o,
      bypassUrlTrigger: input.bypassUrlTrigger,
    })
    if (result.deleted === 0) throw rpcError('NOT_FOUND', `Row ${rowId} not found`)
    return { formLastModified: result.formLastModified, id: Number(rowId) }
  }
}
