import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { ValuesService } from '../services/values_service.js'
import { ownerField, unlockField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    ...unlockField,
    catId: stamp(),
    viewId: stamp().optional(),
    format: vine.string().optional(),
    maxRows: stamp().optional(),
    offset: stamp().optional(),
    lastModifiedAfter: vine.string().optional(),
  })
)

/** listTableRowsById (docs/spec/client-facts.md): rows of a table, optionally through a
 * view's filters, optionally only those modified after a unix time. */
@inject()
export default class ListTableRowsById extends BaseOperation {
  static operation = 'listTableRowsById'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private values: ValuesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.values.rowsById(ctx.actor, input)
  }
}
