import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, list } from '#core/rpc/wire'
import { RowsService } from '../services/rows_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    rows: list(),
    catId: vine.any().optional(),
    bypassUrlTrigger: flag().optional(),
  })
)

/** deleteTableRows (docs/spec/client-facts.md): `rows` is a list of ids (JSON, `rows[0]=5` or `5,6`); tmp ids are skipped. */
@inject()
export default class DeleteTableRows extends BaseOperation {
  static operation = 'deleteTableRows'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private rows: RowsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.rows.deleteRowList(ctx.actor!, input)
  }
}
