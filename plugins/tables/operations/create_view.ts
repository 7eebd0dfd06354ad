import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { ViewStructure } from '../services/view_structure.js'
import { ownerField, viewFields } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    ...viewFields,
  })
)

/** createView (extension, see README.md). */
@inject()
export default class CreateView extends BaseOperation {
  static operation = 'createView'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private views: ViewStructure) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const viewId = await this.views.createView(ctx.actor!, input.catId, input)
    return { catId: input.catId, viewId }
  }
}
