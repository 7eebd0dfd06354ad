import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { ViewStructure } from '../services/view_structure.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    viewId: stamp(),
  })
)

/** deleteView (extension, see README.md). */
@inject()
export default class DeleteView extends BaseOperation {
  static operation = 'deleteView'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private views: ViewStructure) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    await this.views.deleteView(ctx.actor!, input.viewId, input.b_o)
    return { viewId: input.viewId }
  }
}
