import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { text } from '#core/rpc/schema'
import bookAccess from '#plugins/books/services/book_access'
import { metaService } from '../services/meta_service.js'
import { tableAccess } from '../services/table_access.js'
import { valuesService } from '../services/values_service.js'
import { valuesOptions } from './get_table_values.js'

/** getNamedTableValues: getTableValues by sync codes (catCode, fieldCodes) instead of ids. */
export default class GetNamedTableValues extends BaseOperation {
  static operation = 'getNamedTableValues'
  static auth = 'session_or_public_table' as const
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: text(),
      b_c: text(),
      catCode: text(),
      fieldCodes: vine.string().optional(),
      ...valuesOptions,
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const book = await bookAccess.resolve(input.b_o, input.b_c)
    const form = book ? await metaService.formOfBook(book.id) : null
    const catId = form ? await metaService.categoryByCode(form.id, input.catCode) : null
    if (!catId) throw rpcError('NOT_FOUND', `No table with code "${input.catCode}"`)
    const scope = await tableAccess.forCategory(ctx.actor, catId, 'read', input.b_o)
    let fieldIds: number[] | null = null
    if (input.fieldCodes) {
      fieldIds = String(input.fieldCodes)
        .split(',')
        .map((code) => code.trim())
        .filter(Boolean)
        .map((code) => {
          const field = scope.category.fields.find(
            (candidate) => candidate.code === code || candidate.fixedCode === code
          )
          if (!field)
            throw rpcError(
              'INVALID_PARAMETER',
              `No field with code "${code}" in table "${scope.category.name}"`
            )
          return field.id
        })
    }
    return valuesService.tableValues(ctx.actor, scope, { ...input, fieldIds })
  }
}
