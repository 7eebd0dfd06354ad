import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, listOf, object, text } from '#core/rpc/wire'
import { StructureService } from '../services/structure_service.js'
import { TABLE_LIMITS } from '../lib/limits.js'

const validator = vine.compile(
  vine.object({
    b_o: text(),
    b_c: text(),
    name: text().maxLength(TABLE_LIMITS.nameLength),
    description: vine.string().maxLength(TABLE_LIMITS.descriptionLength).optional(),
    code: vine.string().maxLength(TABLE_LIMITS.codeLength).optional(),
    fields: listOf(object()).optional(),
    public: flag().optional(),
  })
)

/** createTable (extension): a new category with a default view and tab; optional initial fields. */
@inject()
export default class CreateTable extends BaseOperation {
  static operation = 'createTable'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private structure: StructureService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const created = await this.structure.createTableIn(ctx.actor!, input)
    return { catId: created.categoryId, viewId: created.viewId, tabId: created.tabId }
  }
}
