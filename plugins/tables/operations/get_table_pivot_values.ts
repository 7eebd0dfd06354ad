import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { looseText, stamp } from '#core/rpc/wire'
import { PivotService } from '../services/pivot_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    p_field_hz: stamp().optional(),
    p_field_vt: stamp().optional(),
    p_field_va: stamp().optional(),
    p_field_co: looseText().maxLength(16).optional(),
    dateGrouping: looseText().maxLength(16).optional(),
    viewId: stamp().optional(),
    filterRowIds: vine.any().optional(),
  })
)

/** getTablePivotValues: a two-way aggregate of a table's rows (spec 2.6 pivot settings), by SQL. */
@inject()
export default class GetTablePivotValues extends BaseOperation {
  static operation = 'getTablePivotValues'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private pivots: PivotService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.pivots.pivot(ctx.actor, input)
  }
}
