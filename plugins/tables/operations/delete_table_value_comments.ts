import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { idList, stamp, text } from '#core/rpc/wire'
import { CommentsService } from '../services/comments_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    fieldId: stamp(),
    rowId: text(),
    ids: idList(),
  })
)

/** deleteTableValueComments (named by the spec, parameters not shown; Quire's
 * extension): deletes comments `ids` of a cell; each must be the caller's own
 * unless the caller administers the book. Answers fieldId, rowId, deleted. */
@inject()
export default class DeleteTableValueComments extends BaseOperation {
  static operation = 'deleteTableValueComments'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private comments: CommentsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.comments.removeFromCell(ctx.actor!, input)
  }
}
