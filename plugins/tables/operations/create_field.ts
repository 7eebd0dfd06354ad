import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** createField (extension, see README.md). */
export default class CreateField extends BaseOperation {
  static operation = 'createField'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      catId: stamp(),
      name: vine.any().optional(),
      description: vine.any().optional(),
      code: vine.any().optional(),
      order: vine.any().optional(),
      type: vine.any(),
      readOnly: vine.any().optional(),
      options: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const fieldId = await structureService.createField(ctx.actor!, input.catId, input)
    return { catId: input.catId, fieldId }
  }
}
