import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { TabStructure } from '../services/tab_structure.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    tabId: stamp(),
  })
)

/** deleteTab (extension, see README.md). */
@inject()
export default class DeleteTab extends BaseOperation {
  static operation = 'deleteTab'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private tabs: TabStructure) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    await this.tabs.deleteTab(ctx.actor!, input.tabId, input.b_o)
    return { tabId: input.tabId }
  }
}
