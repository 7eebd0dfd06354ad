import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp, text } from '#core/rpc/wire'
import { CommentsService } from '../services/comments_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    fieldId: stamp(),
    rowId: text(),
    m: vine.string(),
    id: stamp().optional(),
    action: vine.any().optional(),
  })
)

/** editTableValueComments (named by the spec, parameters not shown; Quire's
 * extension): adds a comment `m` to a cell of a comments field, or changes
 * comment `id` (its author only). Answers the comment `id` and the thread as
 * getTableValueComments does. */
@inject()
export default class EditTableValueComments extends BaseOperation {
  static operation = 'editTableValueComments'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private comments: CommentsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.comments.editInCell(ctx.actor!, input)
  }
}
