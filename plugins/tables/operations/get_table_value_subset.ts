import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import stamps from '#core/services/stamps'
import { stamp } from '#core/rpc/schema'
import { tableAccess } from '../services/table_access.js'
import { valuesService } from '../services/values_service.js'
import { asIdList } from '../services/wire.js'

/** getTableValueSubset: chosen cells, rows in the order of rowIds, values in the order of fieldIds. */
export default class GetTableValueSubset extends BaseOperation {
  static operation = 'getTableValueSubset'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      catId: stamp(),
      fieldIds: vine.any(),
      rowIds: vine.any(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const sstamp = await stamps.watermark()
    const scope = await tableAccess.forCategory(ctx.actor, input.catId, 'read', input.b_o)
    const tableValues = await valuesService.subset(
      scope,
      asIdList(input.fieldIds, 'fieldIds'),
      asIdList(input.rowIds, 'rowIds')
    )
    return { sstamp, catId: scope.category.id, tableValues }
  }
}
