import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { ValuesService } from '../services/values_service.js'
import { ownerField, unlockField, valuesOptions } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    ...unlockField,
    catId: stamp(),
    fromFieldId: stamp().optional(),
    ...valuesOptions,
  })
)

/** getTableValues: a page of rows of one table, filtered and sorted by SQL. */
@inject()
export default class GetTableValues extends BaseOperation {
  static operation = 'getTableValues'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private values: ValuesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.values.tableValues(ctx.actor, input)
  }
}
