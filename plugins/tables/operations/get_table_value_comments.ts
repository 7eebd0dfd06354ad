import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp, text } from '#core/rpc/schema'
import { commentsService } from '../services/comments_service.js'
import { tableAccess } from '../services/table_access.js'
import { rowIdOf } from '../services/wire.js'

/**
 * getTableValueComments (spec A.6): the comment thread of one cell, oldest
 * first, with its summary and authors; the reader's unread count of the cell
 * drops to 0.
 */
export default class GetTableValueComments extends BaseOperation {
  static operation = 'getTableValueComments'
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      fieldId: stamp(),
      rowId: text(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const categoryId = await tableAccess.inferCategory({ fieldId: input.fieldId })
    const scope = await tableAccess.forCategory(ctx.actor, categoryId, 'read', input.b_o)
    return commentsService.thread(ctx.actor, scope, input.fieldId, rowIdOf(input.rowId))
  }
}
