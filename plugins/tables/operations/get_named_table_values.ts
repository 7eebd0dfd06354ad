import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { text } from '#core/rpc/wire'
import { ValuesService } from '../services/values_service.js'
import { valuesOptions } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    b_o: text(),
    b_c: text(),
    catCode: text(),
    fieldCodes: vine.string().optional(),
    ...valuesOptions,
  })
)

/** getNamedTableValues: getTableValues by sync codes (catCode, fieldCodes) instead of ids. */
@inject()
export default class GetNamedTableValues extends BaseOperation {
  static operation = 'getNamedTableValues'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private values: ValuesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.values.namedTableValues(ctx.actor, input)
  }
}
