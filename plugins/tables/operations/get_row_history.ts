import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp, text } from '#core/rpc/wire'
import { HistoryService } from '../services/history_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    rowId: text(),
    fieldId: stamp().optional(),
    page: stamp().optional(),
    nbMax: stamp().optional(),
  })
)

/**
 * getRowHistory (issue 21 item 1): the recorded changes of one row (or of
 * one of its cells with fieldId), newest first, `nbMax` per page, and their
 * `total`. Needs the right to read the table.
 */
@inject()
export default class GetRowHistory extends BaseOperation {
  static operation = 'getRowHistory'
  static area = 'tables' as const
  static validator = validator

  constructor(private history: HistoryService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.history.rowHistory(ctx.actor, input)
  }
}
