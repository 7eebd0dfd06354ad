import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** createView (extension, see README.md). */
export default class CreateView extends BaseOperation {
  static operation = 'createView'
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
      presentation: vine.any().optional(),
      locked: vine.any().optional(),
      filterGroup: vine.any().optional(),
      card: vine.any().optional(),
      calendar: vine.any().optional(),
      hiddenFields: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const viewId = await structureService.createView(ctx.actor!, input.catId, input)
    return { catId: input.catId, viewId }
  }
}
