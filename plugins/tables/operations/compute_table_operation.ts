import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp, text } from '#core/rpc/wire'
import { ValuesService } from '../services/values_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    operation: text(),
    filterRowIds: vine.any().optional(),
  })
)

/** computeTableOperation: `count` of the rows selected by filterRowIds, by one SQL COUNT. */
@inject()
export default class ComputeTableOperation extends BaseOperation {
  static operation = 'computeTableOperation'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private values: ValuesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.values.compute(ctx.actor, input)
  }
}
