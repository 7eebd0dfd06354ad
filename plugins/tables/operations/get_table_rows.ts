import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import { flag, stamp } from '#core/rpc/schema'
import { tableAccess } from '../services/table_access.js'
import { valuesService } from '../services/values_service.js'
import { asIdList } from '../services/wire.js'

/** getTableRows (deprecated since 6.47): pages of rows in the mobile (`rows`) format. */
export default class GetTableRows extends BaseOperation {
  static operation = 'getTableRows'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      catId: stamp(),
      rowIds: vine.any().optional(),
      pageSize: stamp().optional(),
      page: stamp().optional(),
      getTableInfo: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const sstamp = await stamps.watermark()
    const scope = await tableAccess.forCategory(ctx.actor, input.catId, 'read', input.b_o)
    const pageSize = input.pageSize || 100
    const page = Math.max(1, input.page || 1)
    const rowIds = input.rowIds ? asIdList(input.rowIds, 'rowIds') : []
    const selection = { where: [], orderBy: [], onlyIds: rowIds.length ? rowIds : null }
    const rows = await valuesService.selectRows(scope.category, selection, {
      offset: (page - 1) * pageSize,
      limit: pageSize,
    })
    const shaped = valuesService.shape(scope.category.fields, rows, 'rows')
    const out: Record<string, unknown> = {
      sstamp,
      catId: scope.category.id,
      rows: shaped.rows,
      page,
      pageSize,
    }
    if (input.getTableInfo) {
      const bookTables = await valuesService.bookTables(ctx.actor, scope.book, {
        includeFields: true,
        includeEnums: true,
        android: true,
        getRowIds: true,
        externViews: false,
      })
      const categories = (bookTables?.categories ?? []) as { id: number }[]
      out.table = {
        ...bookTables,
        categories: categories.filter((category) => category.id === scope.category.id),
      }
    }
    return out
  }
}
