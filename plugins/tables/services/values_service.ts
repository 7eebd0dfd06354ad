import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import stamps from '#core/services/stamps'
import bookAccess from '#plugins/books/services/book_access'
import { rowTableName, serializeCell, type FieldDef } from './field_types.js'
import { commentsService } from './comments_service.js'
import { FilterCompiler, normalizeGroup, type FilterGroupSpec } from './filter_compiler.js'
import { metaService, type CategoryMeta, type TabMeta } from './meta_service.js'
import { readQuery } from '#core/native_sql'
import { tableAccess, type TableScope } from './table_access.js'
import { asBool, asIdList, asObject } from './wire.js'
import {
  serializeCategory,
  serializeField,
  serializeForm,
  serializeTab,
} from '../serializers/table_serializer.js'

type Row = Record<string, any>
export type ValuesFormat = 'columns' | 'rows' | 'diff_ready_rows'

export const DEFAULT_MAX_ROWS = 100

interface Selection {
  where: { sql: string; bindings: unknown[] }[]
  orderBy: { column: string; direction: 'asc' | 'desc' }[]
  /** Row ids to return in exactly this set (row_ids with exclude false); empty array = no rows. */
  onlyIds: number[] | null
}

const quote = (identifier: string) =>
  db.connection().dialect.name === 'mysql' ? `\`${identifier}\`` : `"${identifier}"`

/**
 * Reads of smart-table values: every filter, sort and page is done by SQL on
 * the category's row table (computed columns are stored, so link and lookup
 * columns cost nothing extra), and answers are shaped per `format`.
 */
export class ValuesService {
  // ---- filterRowIds -------------------------------------------------------

  /**
   * filterRowIds (spec 4.A.6): `{row_ids, exclude, applyViewFilters}` as JSON
   * or bracket object, or `1,2,3` / `!1,2,3`. applyViewFilters is a view id,
   * true (the user's selected view), or {filterGroup} for an unsaved view.
   */
  async selection(scope: TableScope, actor: Actor | null, raw: unknown): Promise<Selection> {
    const selection: Selection = { where: [], orderBy: [], onlyIds: null }
    if (raw === undefined || raw === null || raw === '') return selection
    let object: Record<string, any>
    if (typeof raw === 'string' && !raw.trim().startsWith('{')) {
      const text = raw.trim()
      const exclude = text.startsWith('!')
      object = { row_ids: text.replace(/^!/, ''), exclude }
    } else {
      object = asObject(raw, 'filterRowIds')
    }
    const rowIds =
      object.row_ids === undefined ? [] : asIdList(object.row_ids, 'filterRowIds.row_ids')
    const exclude = asBool(object.exclude, false)
    if (rowIds.length && !exclude) {
      selection.onlyIds = rowIds
      return selection // rule 3: row_ids prevail, applyViewFilters ignored
    }
    const group = await this.viewGroup(scope, actor, object.applyViewFilters)
    if (group) {
      const compiled = new FilterCompiler(scope.category.fields, {
        userCode: actor?.user.code ?? null,
      }).compile(group)
      if (compiled.where) selection.where.push(compiled.where)
      selection.orderBy = compiled.orderBy
    }
    if (rowIds.length && exclude) {
      selection.where.push({
        sql: `t.id NOT IN (${rowIds.map(() => '?').join(', ')})`,
        bindings: rowIds,
      })
    }
    return selection
  }

  private async viewGroup(
    scope: TableScope,
    actor: Actor | null,
    raw: unknown
  ): Promise<FilterGroupSpec | null> {
    if (raw === undefined || raw === null || raw === '') return null
    const { category } = scope
    if (typeof raw === 'object') {
      const object = raw as Record<string, any>
      return normalizeGroup(object.filterGroup ?? object)
    }
    const text = String(raw).trim()
    if (text.startsWith('{')) {
      const object = asObject(text, 'applyViewFilters')
      return normalizeGroup(object.filterGroup ?? object)
    }
    if (['false', '0', 'off', 'no'].includes(text.toLowerCase())) return null
    let viewId: number | null = null
    if (['true', 'on', 'yes'].includes(text.toLowerCase())) {
      const state = actor ? await metaService.userState(actor.user.id, category.formId) : null
      viewId = state?.selectedViews[String(category.id)] ?? category.views[0]?.id ?? null
      if (viewId === null) return null
    } else if (/^\d+$/.test(text)) {
      viewId = Number(text)
    } else {
      throw rpcError(
        'INVALID_PARAMETER',
        'Invalid parameter filterRowIds.applyViewFilters: a view id, true, or {filterGroup}'
      )
    }
    const view = category.views.find((candidate) => candidate.id === viewId)
    if (!view)
      throw rpcError(
        'INVALID_PARAMETER',
        `View ${viewId} is not a view of table "${category.name}"`
      )
    return view.filterGroup
  }

  private baseQuery(category: CategoryMeta, selection: Selection) {
    const query = db.from(`${rowTableName(category.id)} as t`)
    for (const where of selection.where) query.whereRaw(`(${where.sql})`, where.bindings as any[])
    if (selection.onlyIds) query.whereIn('t.id', selection.onlyIds.length ? selection.onlyIds : [0])
    return query
  }

  private ordered(query: ReturnType<ValuesService['baseQuery']>, selection: Selection) {
    for (const order of selection.orderBy)
      query.orderByRaw(`t.${quote(order.column)} ${order.direction}`)
    return query.orderBy('t.ord', 'asc').orderBy('t.id', 'asc')
  }

  /** WHERE clause of a selection (filter SQL from the compiler, `?` bindings). */
  private whereOf(selection: Selection) {
    const parts = selection.where.map((where) => `(${where.sql})`)
    const bindings = selection.where.flatMap((where) => where.bindings)
    if (selection.onlyIds) {
      if (selection.onlyIds.length === 0) parts.push('1 = 0')
      else {
        parts.push(`t.id IN (${selection.onlyIds.map(() => '?').join(', ')})`)
        bindings.push(...selection.onlyIds)
      }
    }
    return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', bindings }
  }

  private orderOf(selection: Selection) {
    return [
      ...selection.orderBy.map((order) => `t.${quote(order.column)} ${order.direction}`),
      't.ord asc',
      't.id asc',
    ].join(', ')
  }

  /**
   * A page of rows. The page is chosen by an id-only query (answered from an
   * index: (ord, id), or (column, ord, id) for a saved view's filter), then
   * the full rows of that page are joined by primary key: skipped rows
   * (OFFSET) are never read from the table. MariaDB would otherwise fetch
   * every skipped row, or sort the whole table. Runs on the driver
   * connection (app/core/native_sql.ts).
   */
  async selectRows(
    category: CategoryMeta,
    selection: Selection,
    page: { offset: number; limit: number | null }
  ): Promise<Row[]> {
    const table = quote(rowTableName(category.id))
    const where = this.whereOf(selection)
    const order = this.orderOf(selection)
    if (page.limit === null && page.offset === 0)
      return readQuery(`SELECT t.* FROM ${table} t ${where.sql} ORDER BY ${order}`, where.bindings)
    const limit = Math.min(page.limit ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
    return readQuery(
      `SELECT t.* FROM ${table} t JOIN (SELECT t.id FROM ${table} t ${where.sql} ORDER BY ${order} ` +
        `LIMIT ${Math.floor(limit)} OFFSET ${Math.floor(page.offset)}) p ON p.id = t.id ORDER BY ${order}`,
      where.bindings
    )
  }

  async count(category: CategoryMeta, selection: Selection): Promise<number> {
    const where = this.whereOf(selection)
    const rows = await readQuery(
      `SELECT COUNT(*) AS total FROM ${quote(rowTableName(category.id))} t ${where.sql}`,
      where.bindings
    )
    return Number(rows[0]?.total ?? 0)
  }

  // ---- getTableValues -----------------------------------------------------

  async tableValues(
    actor: Actor | null,
    scope: TableScope,
    input: {
      filterRowIds?: unknown
      tabId?: number
      offset?: number
      maxRows?: number
      format?: string
      getAllViews?: boolean
      getDependencies?: boolean
      maxComments?: number
      fieldIds?: number[] | null
    }
  ) {
    if (
      input.maxComments !== undefined &&
      input.maxComments !== null &&
      (!Number.isInteger(input.maxComments) || input.maxComments < 1 || input.maxComments > 10)
    )
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter maxComments: 1 to 10', {
        field: 'maxComments',
      })
    const sstamp = await stamps.watermark()
    const { category } = scope
    const format = this.format(input.format)
    if (input.tabId !== undefined && actor) await this.rememberTab(actor, scope, input.tabId)
    const fields = input.fieldIds
      ? input.fieldIds
          .map((id) => category.fields.find((field) => field.id === id)!)
          .filter(Boolean)
      : category.fields
    const selection = await this.selection(scope, actor, input.filterRowIds)
    const offset = Math.max(0, input.offset ?? 0)
    const limit = input.getAllViews
      ? (input.maxRows ?? null)
      : Math.max(0, input.maxRows ?? DEFAULT_MAX_ROWS)
    const rows = await this.selectRows(category, selection, { offset, limit })
    const users = await commentsService.attach(
      category,
      fields,
      rows,
      actor?.user.id ?? null,
      input.maxComments ?? undefined
    )

    const tableValues: Record<string, unknown> = {
      id: category.id,
      ...this.shape(fields, rows, format),
    }
    if (input.getAllViews) {
      const ids = new Set(rows.map((row) => Number(row.id)))
      tableValues.views = await Promise.all(
        category.views.map(async (view) => {
          const compiled = new FilterCompiler(category.fields, {
            userCode: actor?.user.code ?? null,
          }).compile(view.filterGroup)
          const viewSelection: Selection = {
            where: [...selection.where, ...(compiled.where ? [compiled.where] : [])],
            orderBy: compiled.orderBy,
            onlyIds: selection.onlyIds,
          }
          const viewRows = await this.ordered(
            this.baseQuery(category, viewSelection).select('t.id'),
            viewSelection
          )
          return {
            id: view.id,
            name: view.name,
            rowIds: viewRows.map((row) => Number(row.id)).filter((id) => ids.has(id)),
          }
        })
      )
    } else {
      tableValues.rowInfos = this.rowInfos(rows, offset)
    }
    tableValues.rowInfosLength = rows.length
    if (input.getDependencies) tableValues.dependencies = this.dependencies(category)
    // With maxComments, comment cells carry their last comments and `users` their authors.
    if (input.maxComments) tableValues.users = users
    return { sstamp, catId: category.id, tableValues }
  }

  format(raw: unknown): ValuesFormat {
    const format = String(raw ?? '').trim() || 'columns'
    if (!['columns', 'rows', 'diff_ready_rows'].includes(format)) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter format: ${format} (columns, rows or diff_ready_rows)`
      )
    }
    return format as ValuesFormat
  }

  /** rowInfos: {rowId: {order, index}}, or [] when empty (as the reference server's PHP answers). */
  rowInfos(rows: Row[], offset: number) {
    if (rows.length === 0) return []
    const infos: Record<string, { order: number; index: number }> = {}
    rows.forEach(
      (row, index) => (infos[String(row.id)] = { order: Number(row.ord), index: offset + index })
    )
    return infos
  }

  shape(fields: FieldDef[], rows: Row[], format: ValuesFormat) {
    if (format === 'rows') {
      return {
        fields: fields.map((field) => serializeField(field)),
        rows: rows.map((row) => {
          const cells: Record<string, unknown> = {}
          for (const field of fields) cells[field.name] = serializeCell(field, row)
          return { id: Number(row.id), fields: cells }
        }),
      }
    }
    if (format === 'diff_ready_rows') {
      const keyed: Record<string, Record<string, unknown>> = {}
      for (const row of rows) {
        const cells: Record<string, unknown> = {}
        for (const field of fields) cells[String(field.id)] = serializeCell(field, row).value
        keyed[String(row.id)] = cells
      }
      return {
        fields: fields.map((field) => serializeField(field)),
        rows: rows.length ? keyed : [],
      }
    }
    return {
      fields: fields.map((field) => ({
        ...serializeField(field),
        values: rows.map((row) => ({ id: Number(row.id), ...serializeCell(field, row) })),
      })),
    }
  }

  dependencies(category: CategoryMeta): number[] {
    return [
      ...new Set(
        category.fields
          .filter((field) => field.type === 'link' && field.options.linkCatId)
          .map((field) => field.options.linkCatId!)
      ),
    ]
  }

  private async rememberTab(actor: Actor, scope: TableScope, tabId: number) {
    const tab: TabMeta | null = await metaService.tab(tabId)
    if (!tab || tab.formId !== scope.form.id)
      throw rpcError('INVALID_PARAMETER', `Tab ${tabId} is not a tab of this book`)
    await metaService.rememberTab(actor.user.id, scope.form.id, tab)
  }

  // ---- other reads --------------------------------------------------------

  async subset(scope: TableScope, fieldIds: number[], rowIds: number[]) {
    const fields = fieldIds.map((id) => {
      const field = scope.category.fields.find((candidate) => candidate.id === id)
      if (!field)
        throw rpcError(
          'INVALID_PARAMETER',
          `Field ${id} is not a field of table "${scope.category.name}"`
        )
      return field
    })
    const byId = new Map<number, Row>()
    for (let i = 0; i < rowIds.length; i += 1000) {
      const rows = await db
        .from(rowTableName(scope.category.id))
        .whereIn('id', rowIds.slice(i, i + 1000))
      for (const row of rows) byId.set(Number(row.id), row)
    }
    return rowIds
      .filter((id) => byId.has(id))
      .map((id) => fields.map((field) => serializeCell(field, byId.get(id)!).value))
  }

  /** getBookTables: the container with its tabs and categories (same order: tabs[i] pairs with categories[i]). */
  async bookTables(
    actor: Actor | null,
    book: { id: number },
    options: {
      includeFields: boolean
      includeEnums: boolean
      android: boolean
      getRowIds: boolean
      externViews: boolean
    }
  ) {
    const form = await metaService.formOfBook(book.id)
    const bookRef = await tableAccess.book(book.id)
    if (!form) {
      if (!actor)
        throw rpcError('MISSING_PARAMETER', 'Missing parameter: sesskey (this table is not public)')
      await bookAccess.assert(actor, bookRef, 'read')
      return null
    }
    const right = await tableAccess.rightIn(actor, bookRef, 'read', form.isPublic)
    const state = actor
      ? await metaService.userState(actor.user.id, form.id)
      : { lastTabId: null, selectedViews: {} as Record<string, number> }
    const tabs = await metaService.tabs(form.id)
    const categories = new Map<number, CategoryMeta>()
    for (const id of await metaService.categoryIdsOfForm(form.id)) {
      const found = await metaService.category(id)
      if (!found) continue
      if (right !== null && right < found.category.rightsSelect && right < 4 && !form.isPublic)
        continue
      categories.set(id, found.category)
    }
    // One tab per category at least, so tabs[i] and categories[i] always pair up.
    const pairs: { tab: ReturnType<typeof serializeTab>; category: CategoryMeta }[] = []
    for (const tab of tabs) {
      const category = categories.get(tab.categoryId)
      if (category) pairs.push({ tab: serializeTab(tab), category })
    }
    for (const category of categories.values()) {
      if (!pairs.some((pair) => pair.category.id === category.id)) {
        pairs.push({
          tab: {
            id: 0,
            category_id: category.id,
            view_id: category.views[0]?.id ?? null,
            order: 0,
            hidden: false,
            lastModified: category.lastModified,
          },
          category,
        })
      }
    }
    const creator = form.creatorId
      ? await db.from('users').where('id', form.creatorId).select('code').first()
      : null
    const out: Record<string, unknown> = {
      ...serializeForm(form, {
        creator: creator?.code ?? bookRef.b_o,
        right,
        lastTabId: state.lastTabId,
      }),
      tabs: pairs.map((pair) => pair.tab),
      categories: await Promise.all(
        pairs.map(async ({ category }) =>
          serializeCategory(category, {
            includeFields: options.includeFields,
            includeEnums: options.includeEnums,
            selectedViewId: state.selectedViews[String(category.id)] ?? null,
            viewRowIds:
              options.android && options.includeFields && options.getRowIds
                ? await this.viewRowIds(category, actor)
                : undefined,
          })
        )
      ),
    }
    if (options.externViews) out.externViews = []
    return out
  }

  private async viewRowIds(category: CategoryMeta, actor: Actor | null) {
    const map = new Map<number, number[]>()
    for (const view of category.views) {
      const compiled = new FilterCompiler(category.fields, {
        userCode: actor?.user.code ?? null,
      }).compile(view.filterGroup)
      const selection: Selection = {
        where: compiled.where ? [compiled.where] : [],
        orderBy: compiled.orderBy,
        onlyIds: null,
      }
      const rows = await this.ordered(this.baseQuery(category, selection).select('t.id'), selection)
      map.set(
        view.id,
        rows.map((row) => Number(row.id))
      )
    }
    return map
  }
}

export const valuesService = new ValuesService()
