import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { looseText, stamp } from '#core/rpc/wire'
import { ReferenceValuesService } from '../services/reference_values_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    fieldId: stamp(),
    tabId: stamp().optional(),
    fromFieldId: stamp().optional(),
    viewId: stamp().optional(),
    offset: stamp().optional(),
    maxRows: stamp().optional(),
    search_string: looseText().maxLength(255).optional(),
  })
)

/** getReferenceFieldValues: the rows a link field may point to, with their display text. */
@inject()
export default class GetReferenceFieldValues extends BaseOperation {
  static operation = 'getReferenceFieldValues'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = validator

  constructor(private references: ReferenceValuesService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.references.referenceValues(ctx.actor, input)
  }
}
