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
  })
)

/** getTableValueComments (docs/spec/service-interface.md 4.A.6): the comment thread of one cell, oldest
 * first, with its summary and authors; the reader's unread count of the cell
 * drops to 0. */
@inject()
export default class GetTableValueComments extends BaseOperation {
  static operation = 'getTableValueComments'
  static area = 'tables' as const
  static validator = validator

  constructor(private comments: CommentsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.comments.threadOfCell(ctx.actor, input)
  }
}
