import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** deleteView (extension, see README.md). */
export default class DeleteView extends BaseOperation {
  static operation = 'deleteView'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(vine.object({ b_o: vine.string().optional(), viewId: stamp() }))

  async handle(input: any, ctx: OperationContext) {
    await structureService.deleteView(ctx.actor!, input.viewId, input.b_o)
    return { viewId: input.viewId }
  }
}
