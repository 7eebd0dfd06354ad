import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp, text } from '#core/rpc/wire'
import { SmartTextService } from '../services/smart_text_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    rowId: text(),
    fieldId: stamp(),
    bypassUrlTrigger: flag().optional(),
  })
)

/** renderSmartTextField: renders a smart text field's template from a row and stores it in the cell. */
@inject()
export default class RenderSmartTextField extends BaseOperation {
  static operation = 'renderSmartTextField'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private smartTexts: SmartTextService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.smartTexts.render(ctx.actor!, input)
  }
}
