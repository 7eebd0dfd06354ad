import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { RowsService } from '../services/rows_service.js'
import { cellFields, unlockField } from '../validators/params.js'

/** The socket's update table value (type 13) reads the same fields with these rules. */
// cellFields as the socket's type 13 reads them; api.php may also unlock encrypted fields.
const validator = vine.compile(vine.object({ ...cellFields, ...unlockField }))

/** updateTableValue: one cell; a rowId starting with `tmp` creates a row in the field's table. */
@inject()
export default class UpdateTableValue extends BaseOperation {
  static operation = 'updateTableValue'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private rows: RowsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const result = await this.rows.updateValue(ctx.actor!, { ...input, value: input.value ?? '' })
    return result.newRows.length ? { newRows: result.newRows } : {}
  }
}
