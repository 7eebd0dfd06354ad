import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp, text } from '#core/rpc/wire'
import { RollbackService } from '../services/rollback_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    rowId: text(),
    changeId: stamp().optional(),
    sstamp: stamp().optional(),
    scope: text().optional(),
    bypassUrlTrigger: flag().optional(),
  })
)

/**
 * rollBackBeforeChange (issue 21 item 2): restores a row to its state before
 * a recorded change (changeId) or before a stamp (sstamp), undoing every
 * later change of the row; with scope=change, every row the change's write
 * touched. Written through RowWriter: recorded, stamped and announced like
 * any write, so it can itself be rolled back.
 */
@inject()
export default class RollBackBeforeChange extends BaseOperation {
  static operation = 'rollBackBeforeChange'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private rollback: RollbackService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.rollback.rollBack(ctx.actor!, input)
  }
}
