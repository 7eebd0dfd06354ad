import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import stamps from '#core/services/stamps'
import { stamp, text } from '#core/rpc/schema'
import { tableAccess } from '../services/table_access.js'
import { valuesService } from '../services/values_service.js'

/** computeTableOperation: `count` of the rows selected by filterRowIds, by one SQL COUNT. */
export default class ComputeTableOperation extends BaseOperation {
  static operation = 'computeTableOperation'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      catId: stamp(),
      operation: text(),
      filterRowIds: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    if (input.operation !== 'count')
      throw rpcError('INVALID_PARAMETER', `Unknown operation "${input.operation}" (only count)`)
    const sstamp = await stamps.watermark()
    const scope = await tableAccess.forCategory(ctx.actor, input.catId, 'read', input.b_o)
    const selection = await valuesService.selection(scope, ctx.actor, input.filterRowIds)
    return {
      sstamp,
      catId: scope.category.id,
      result: await valuesService.count(scope.category, selection),
    }
  }
}
