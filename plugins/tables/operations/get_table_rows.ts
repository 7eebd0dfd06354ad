import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, idList, stamp } from '#core/rpc/wire'
import { ValuesService } from '../services/values_service.js'
import { ownerField, unlockField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    ...unlockField,
    catId: stamp(),
    rowIds: idList().optional(),
    pageSize: stamp().optional(),
    page: stamp().optional(),
    getTableInfo: flag().optional(),
  })
)

/** getTableRows (deprecated since 6.47): pages of rows in the mobile (`rows`) format. */
@inject()
export default class GetTableRows extends BaseOperation {
  static operation = 'getTableRows'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private values: ValuesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.values.tableRows(ctx.actor, input)
  }
}
