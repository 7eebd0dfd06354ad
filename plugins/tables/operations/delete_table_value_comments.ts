import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp, text } from '#core/rpc/schema'
import { commentsService } from '../services/comments_service.js'
import { tableAccess } from '../services/table_access.js'
import { asIdList, rowIdOf } from '../services/wire.js'

/**
 * deleteTableValueComments (named by the spec, parameters not shown; Quire's
 * extension): deletes comments `ids` of a cell; each must be the caller's own
 * unless the caller administers the book. Answers fieldId, rowId, deleted.
 */
export default class DeleteTableValueComments extends BaseOperation {
  static operation = 'deleteTableValueComments'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      fieldId: stamp(),
      rowId: text(),
      ids: vine.any(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const categoryId = await tableAccess.inferCategory({ fieldId: input.fieldId })
    const scope = await tableAccess.forCategory(ctx.actor, categoryId, 'write', input.b_o)
    return commentsService.remove(ctx.actor!, scope, {
      fieldId: input.fieldId,
      rowId: rowIdOf(input.rowId),
      ids: asIdList(input.ids, 'ids'),
    })
  }
}
