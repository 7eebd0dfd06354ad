import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import { displayText, sqlColumnOf } from '../lib/field_types.js'
import { primaryField } from './computed_fields.js'
import { MetaService } from './meta_service.js'
import { TableAccess } from './table_access.js'
import { RowSelection, type Selection } from './row_selection.js'
import { likeCondition, textSearch, type TextIndexDriver } from './text_index.js'

const DEFAULT_MAX_ROWS = 100
const MAX_ROWS = 1000
/**
 * `total` counts at most this many matches, or the page's end when it is further (README,
 * "Reference values"): beyond, it answers the cap with `totalCapped: true`. Counting every
 * match of a common word read the whole table (245 ms on 1M rows).
 */
export const REFERENCE_TOTAL_CAP = 1000

export interface ReferenceInput {
  b_o?: string
  fieldId: number
  tabId?: number
  fromFieldId?: number
  viewId?: number
  offset?: number
  maxRows?: number
  search_string?: string
}

/**
 * getReferenceFieldValues: the rows a link field may point to, with the text
 * that names each (the linked table's first plain field, as link captions).
 * The caller needs the read right on the link's table and on the linked
 * table; the link's view restriction (options.linkViewId) and the caller's
 * viewId filter the rows by the filter compiler, as getTableValues does.
 */
@inject()
export class ReferenceValuesService {
  constructor(
    private stamps: StampService,
    private meta: MetaService,
    private access: TableAccess,
    private rowSelection: RowSelection
  ) {}

  async referenceValues(actor: Actor | null, input: ReferenceInput) {
    const sstamp = await this.stamps.watermark()
    const sourceId = await this.meta.categoryOfField(input.fieldId)
    if (!sourceId) throw rpcError('NOT_FOUND', `Field ${input.fieldId} not found`)
    const source = await this.access.forCategory(actor, sourceId, 'read', input.b_o)
    const field = source.category.fields.find((candidate) => candidate.id === input.fieldId)
    if (!field) throw rpcError('NOT_FOUND', `Field ${input.fieldId} not found`)
    if (field.type !== 'link' || !field.options.linkCatId)
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter fieldId: "${field.name}" is not a link`,
        {
          field: 'fieldId',
        }
      )
    if (input.fromFieldId !== undefined && input.fromFieldId !== field.id) {
      const from = source.category.fields.find((candidate) => candidate.id === input.fromFieldId)
      if (!from || from.type !== 'link')
        throw rpcError(
          'INVALID_PARAMETER',
          `Invalid parameter fromFieldId: not a link field of table "${source.category.name}"`,
          { field: 'fromFieldId' }
        )
    }
    // The linked table's own rights: a member who may not read it gets NOT_FOUND.
    const target = await this.access.forCategory(actor, field.options.linkCatId, 'read')
    const { category } = target
    const selection: Selection = { where: [], orderBy: [], onlyIds: null }
    for (const viewId of [field.options.linkViewId, input.viewId]) {
      if (!viewId) continue
      const view = await this.rowSelection.selection(target, actor, {
        applyViewFilters: String(viewId),
      })
      selection.where.push(...view.where)
      if (viewId === input.viewId || selection.orderBy.length === 0)
        selection.orderBy = view.orderBy
    }
    const primary = primaryField(category)
    const search = (input.search_string ?? '').trim()
    // The count's selection: the same rows, read through the text index's matches when there is one.
    let counted: { selection: Selection; driver: TextIndexDriver | null } = {
      selection,
      driver: null,
    }
    if (search) {
      const column = primary ? sqlColumnOf(primary) : null
      if (!primary || !column)
        return {
          sstamp,
          fieldId: field.id,
          catId: category.id,
          values: [],
          total: 0,
          totalCapped: false,
        }
      // Any case of ASCII letters, wildcards literal; through the text index when it answers.
      const { condition, driver } = await textSearch(primary, column, search)
      if (driver)
        counted = {
          selection: { ...selection, where: [...selection.where, likeCondition(column, search)] },
          driver,
        }
      selection.where.push(condition)
    }
    const limit = Math.min(Math.max(0, input.maxRows ?? DEFAULT_MAX_ROWS), MAX_ROWS)
    const offset = Math.max(0, input.offset ?? 0)
    const rows = await this.rowSelection.selectRows(category, selection, { offset, limit })
    const cap = Math.max(REFERENCE_TOTAL_CAP, offset + limit)
    // A short page is the last one: it tells the total without a second read (a search few
    // rows hold, where no text index answers, scanned the table twice: page, then count).
    const last = rows.length < limit && (rows.length > 0 || offset === 0)
    const total = last
      ? offset + rows.length
      : await this.rowSelection.countUpTo(category, counted.selection, cap, counted.driver)
    return {
      sstamp,
      fieldId: field.id,
      catId: category.id,
      values: rows.map((row) => ({
        id: Number(row.id),
        text: primary ? displayText(primary, row) : String(row.id),
      })),
      total: Math.min(total, cap),
      totalCapped: total > cap,
    }
  }
}
