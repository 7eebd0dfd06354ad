import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import { structureService } from '../services/structure_service.js'

/** deleteTab (extension, see README.md). */
export default class DeleteTab extends BaseOperation {
  static operation = 'deleteTab'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(vine.object({ b_o: vine.string().optional(), tabId: stamp() }))

  async handle(input: any, ctx: OperationContext) {
    await structureService.deleteTab(ctx.actor!, input.tabId, input.b_o)
    return { tabId: input.tabId }
  }
}
