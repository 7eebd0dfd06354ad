import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** updateTable (extension, see README.md). */
export default class UpdateTable extends BaseOperation {
  static operation = 'updateTable'
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
      locked: vine.any().optional(),
      rights: vine.any().optional(),
      prefs: vine.any().optional(),
      public: vine.any().optional(),
      triggerUpdateUrl: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    await structureService.updateTable(ctx.actor!, input.catId, input)
    return { catId: input.catId }
  }
}
