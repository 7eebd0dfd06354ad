import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { kindOf, rowTableName, sqlColumnOf } from '../lib/field_types.js'
import { placeholders, renderTemplate } from '../lib/smart_text.js'
import { rowIdOf } from '../lib/wire.js'
import { RowsService } from './rows_service.js'
import { TableAccess } from './table_access.js'
import { userNamesOf } from './user_names.js'

/**
 * renderSmartTextField: renders a smarttext field's template from one row
 * and stores the result in the cell through RowsService.updateValue, the
 * path updateTableValue takes (stamp, tables:rows_changed, webhooks unless
 * bypassUrlTrigger).
 */
@inject()
export class SmartTextService {
  constructor(
    private access: TableAccess,
    private rows: RowsService
  ) {}

  async render(
    actor: Actor,
    input: {
      b_o?: string
      catId: number
      rowId: string
      fieldId: number
      bypassUrlTrigger?: boolean
    }
  ) {
    const scope = await this.access.forCategory(actor, input.catId, 'write', input.b_o)
    const { category } = scope
    const field = category.fields.find((candidate) => candidate.id === input.fieldId)
    if (!field)
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter fieldId: not a field of table "${category.name}"`,
        { field: 'fieldId' }
      )
    if (field.type !== 'smarttext')
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter fieldId: "${field.name}" is not a smart text field`,
        { field: 'fieldId' }
      )
    const rowId = rowIdOf(input.rowId)
    const row = await db.from(rowTableName(category.id)).where('id', rowId).first()
    if (!row) throw rpcError('NOT_FOUND', `Row ${rowId} not found`)
    const template = field.options.template ?? ''
    const userNames = await userNamesOf(
      placeholders(template, category.fields)
        .filter((used) => kindOf(used) === 'user')
        .map((used) => row[sqlColumnOf(used) ?? ''])
        .filter((code): code is string => typeof code === 'string' && code !== '')
    )
    const value = renderTemplate(template, category.fields, row, {
      html: field.options.templateFormat === 'html',
      userNames,
    })
    await this.rows.updateValue(actor, {
      rowId: String(rowId),
      fieldId: field.id,
      value,
      b_o: input.b_o,
      bypassUrlTrigger: input.bypassUrlTrigger,
    })
    return { catId: category.id, rowId, fieldId: field.id, value }
  }
}
