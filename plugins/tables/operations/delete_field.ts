import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { FieldStructure } from '../services/field_structure.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    fieldId: stamp(),
  })
)

/** deleteField (extension, see README.md). */
@inject()
export default class DeleteField extends BaseOperation {
  static operation = 'deleteField'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private fields: FieldStructure) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    await this.fields.deleteField(ctx.actor!, input.fieldId, input.b_o)
    return { fieldId: input.fieldId }
  }
}
