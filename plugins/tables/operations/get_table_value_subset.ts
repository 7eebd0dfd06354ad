import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { idList, stamp } from '#core/rpc/wire'
import { ValuesService } from '../services/values_service.js'
import { ownerField, unlockField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    ...unlockField,
    catId: stamp(),
    fieldIds: idList(),
    rowIds: idList(),
  })
)

/** getTableValueSubset: chosen cells, rows in the order of rowIds, values in the order of fieldIds. */
@inject()
export default class GetTableValueSubset extends BaseOperation {
  static operation = 'getTableValueSubset'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private values: ValuesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.values.subset(ctx.actor, input)
  }
}
