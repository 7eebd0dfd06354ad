import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { looseText, stamp } from '#core/rpc/wire'
import { FieldStructure } from '../services/field_structure.js'
import { fieldFields, ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    ...fieldFields,
    type: looseText(),
  })
)

/** createField (extension, see README.md). */
@inject()
export default class CreateField extends BaseOperation {
  static operation = 'createField'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private fields: FieldStructure) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const fieldId = await this.fields.createField(ctx.actor!, input.catId, input)
    return { catId: input.catId, fieldId }
  }
}
