import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** updateView (extension, see README.md). */
export default class UpdateView extends BaseOperation {
  static operation = 'updateView'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      viewId: stamp(),
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
    await structureService.updateView(ctx.actor!, input.viewId, input)
    return { viewId: input.viewId }
  }
}
