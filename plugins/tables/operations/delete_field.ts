import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** deleteField (extension, see README.md). */
export default class DeleteField extends BaseOperation {
  static operation = 'deleteField'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(vine.object({ b_o: vine.string().optional(), fieldId: stamp() }))

  async handle(input: any, ctx: OperationContext) {
    await structureService.deleteField(ctx.actor!, input.fieldId, input.b_o)
    return { fieldId: input.fieldId }
  }
}
