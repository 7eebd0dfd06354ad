import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { TabStructure } from '../services/tab_structure.js'
import { ownerField, tabFields } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    ...tabFields,
  })
)

/** createTab (extension, see README.md). */
@inject()
export default class CreateTab extends BaseOperation {
  static operation = 'createTab'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private tabs: TabStructure) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const tabId = await this.tabs.createTab(ctx.actor!, input.catId, input)
    return { catId: input.catId, tabId }
  }
}
