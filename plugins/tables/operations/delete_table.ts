import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** deleteTable (extension, see README.md). */
export default class DeleteTable extends BaseOperation {
  static operation = 'deleteTable'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(vine.object({ b_o: vine.string().optional(), catId: stamp() }))

  async handle(input: any, ctx: OperationContext) {
    await structureService.deleteTable(ctx.actor!, input.catId, input.b_o)
    return { catId: input.catId }
  }
}
