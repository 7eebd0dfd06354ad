import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** createTab (extension, see README.md). */
export default class CreateTab extends BaseOperation {
  static operation = 'createTab'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      catId: stamp(),
      view_id: vine.any().optional(),
      viewId: vine.any().optional(),
      order: vine.any().optional(),
      hidden: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const tabId = await structureService.createTab(ctx.actor!, input.catId, input)
    return { catId: input.catId, tabId }
  }
}
