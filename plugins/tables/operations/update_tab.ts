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
    tabId: stamp(),
    ...tabFields,
  })
)

/** updateTab (extension, see README.md). */
@inject()
export default class UpdateTab extends BaseOperation {
  static operation = 'updateTab'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private tabs: TabStructure) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    await this.tabs.updateTab(ctx.actor!, input.tabId, input)
    return { tabId: input.tabId }
  }
}
