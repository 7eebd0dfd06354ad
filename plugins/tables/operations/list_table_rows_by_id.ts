import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import { stamp } from '#core/rpc/schema'
import { tableAccess } from '../services/table_access.js'
import { valuesService, DEFAULT_MAX_ROWS } from '../services/values_service.js'

/**
 * listTableRowsById (client-facts): rows of a table, optionally through a
 * view's filters, optionally only those modified after a unix time.
 */
export default class ListTableRowsById extends BaseOperation {
  static operation = 'listTableRowsById'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      catId: stamp(),
      viewId: stamp().optional(),
      format: vine.string().optional(),
      maxRows: stamp().optional(),
      offset: stamp().optional(),
      lastModifiedAfter: vine.string().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const sstamp = await stamps.watermark()
    const scope = await tableAccess.forCategory(ctx.actor, input.catId, 'read', input.b_o)
    const selection = await valuesService.selection(
      scope,
      ctx.actor,
      input.viewId ? { applyViewFilters: String(input.viewId) } : undefined
    )
    if (input.lastModifiedAfter) {
      const text = String(input.lastModifiedAfter).trim()
      const date = /^\d+$/.test(text) ? new Date(Number(text) * 1000) : new Date(text)
      if (!Number.isNaN(date.getTime())) {
        const { formatDateTime } = await import('../services/field_types.js')
        selection.where.push({ sql: 't.updated_at > ?', bindings: [formatDateTime(date)] })
      }
    }
    const format = valuesService.format(input.format)
    const offset = input.offset ?? 0
    const rows = await valuesService.selectRows(scope.category, selection, {
      offset,
      limit: input.maxRows || DEFAULT_MAX_ROWS,
    })
    return {
      sstamp,
      catId: scope.category.id,
      tableValues: {
        id: scope.category.id,
        ...valuesService.shape(scope.category.fields, rows, format),
        rowIds: rows.map((row) => Number(row.id)),
        rowInfos: valuesService.rowInfos(rows, offset),
        rowInfosLength: rows.length,
      },
    }
  }
}
