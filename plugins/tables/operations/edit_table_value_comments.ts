import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp, text } from '#core/rpc/schema'
import { commentsService } from '../services/comments_service.js'
import { tableAccess } from '../services/table_access.js'
import { rowIdOf } from '../services/wire.js'

/**
 * editTableValueComments (named by the spec, parameters not shown; Quire's
 * extension): adds a comment `m` to a cell of a comments field, or changes
 * comment `id` (its author only). Answers the comment `id` and the thread as
 * getTableValueComments does.
 */
export default class EditTableValueComments extends BaseOperation {
  static operation = 'editTableValueComments'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      fieldId: stamp(),
      rowId: text(),
      m: vine.string(),
      id: stamp().optional(),
      action: vine.any().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const categoryId = await tableAccess.inferCategory({ fieldId: input.fieldId })
    const scope = await tableAccess.forCategory(ctx.actor, categoryId, 'write', input.b_o)
    return commentsService.edit(ctx.actor!, scope, {
      fieldId: input.fieldId,
      rowId: rowIdOf(input.rowId),
      text: input.m,
      action: input.action,
      commentId: input.id,
    })
  }
}
