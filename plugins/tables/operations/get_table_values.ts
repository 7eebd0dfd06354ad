import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { flag, int, stamp } from '#core/rpc/schema'
import { tableAccess } from '../services/table_access.js'
import { valuesService } from '../services/values_service.js'
import { metaService } from '../services/meta_service.js'

export const valuesOptions = {
  filterRowIds: vine.any().optional(),
  tabId: stamp().optional(),
  offset: stamp().optional(),
  maxRows: stamp().optional(),
  format: vine.string().optional(),
  maxComments: int().optional(),
  getAllViews: flag().optional(),
  getDependencies: flag().optional(),
}

/** getTableValues: a page of rows of one table, filtered and sorted by SQL. */
export default class GetTableValues extends BaseOperation {
  static operation = 'getTableValues'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      catId: stamp(),
      fromFieldId: stamp().optional(),
      encryptedFieldPasswords: vine.any().optional(),
      ...valuesOptions,
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const scope = await tableAccess.forCategory(ctx.actor, input.catId, 'read', input.b_o)
    if (input.fromFieldId) {
      // Reached through a link: the field must be a link (or lookup) field leading to this table.
      const fromCategory = await metaService.categoryOfField(input.fromFieldId)
      const found = fromCategory ? await metaService.category(fromCategory) : null
      const field = found?.category.fields.find((candidate) => candidate.id === input.fromFieldId)
      if (!field) throw rpcError('NOT_FOUND', `Field ${input.fromFieldId} not found`)
      if (field.type !== 'link' || Number(field.options.linkCatId) !== scope.category.id)
        throw rpcError(
          'INVALID_PARAMETER',
          `Invalid parameter fromFieldId: field ${field.id} is not a link to table ${scope.category.id}`,
          { field: 'fromFieldId' }
        )
    }
    return valuesService.tableValues(ctx.actor, scope, input)
  }
}
