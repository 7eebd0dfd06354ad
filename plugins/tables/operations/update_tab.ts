import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** updateTab (extension, see README.md). */
export default class UpdateTab extends BaseOperation {
  static operation = 'updateTab'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      tabId: stamp(),
      view_id: vine.any().optional(),
      viewId: vine.any().optional(),
      order: vine.any().optional(),
      hidden: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    await structureService.updateTab(ctx.actor!, input.tabId, input)
    return { tabId: input.tabId }
  }
}
