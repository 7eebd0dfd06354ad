import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** updateField (extension, see README.md). */
export default class UpdateField extends BaseOperation {
  static operation = 'updateField'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      fieldId: stamp(),
      name: vine.any().optional(),
      description: vine.any().optional(),
      code: vine.any().optional(),
      order: vine.any().optional(),
      type: vine.any().optional(),
      readOnly: vine.any().optional(),
      options: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    await structureService.updateField(ctx.actor!, input.fieldId, input)
    return { fieldId: input.fieldId }
  }
}
