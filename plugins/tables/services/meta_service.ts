import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { FieldDef, FieldOptions, FieldType } from '../lib/field_types.js'
import { readCached, readQuery } from '#core/native_sql'
import { normalizeFilter, type FilterGroupSpec, type FilterSpec } from '../lib/filter_compiler.js'

export interface FormMeta {
  id: number
  bookId: number
  name: string
  description: string | null
  creatorId: number | null
  isPublic: boolean
  isSystem: boolean
  rightsModify: boolean
  rightsSelect: number
  sstamp: number
  lastModified: number
}

export interface ViewMeta {
  id: number
  categoryId: number
  name: string
  description: string | null
  presentation: string
  locked: boolean
  order: number
  card: Record<string, unknown>
  calendar: Record<string, unknown>
  hiddenFields: number[]
  filterGroup: (FilterGroupSpec & { id: number; lastModified: number }) | null
  lastModified: number
}

export interface CategoryMeta {
  id: number
  formId: number
  name: string
  description: string | null
  code: string | null
  fixedCode: string
  order: number
  locked: boolean
  rightsModify: boolean
  rightsSelect: number
  sysFunc: string | null
  triggerUpdateUrl: string | null
  prefs: Record<string, unknown>
  metaVersion: number
  sstamp: number
  lastModified: number
  fields: FieldDef[]
  views: ViewMeta[]
}

export interface TabMeta {
  id: number
  formId: number
  categoryId: number
  viewId: number | null
  order: number
  hidden: boolean
  lastModified: number
}

export const json = <T>(value: unknown, fallback: T): T => {
  if (value === null || value === undefined || value === '') return fallback
  if (typeof value !== 'string') return value as T
  try {
    return JSON.parse(value) as T
  } catch {
    return fallback
  }
}

const toForm = (row: any): FormMeta => ({
  id: Number(row.id),
  bookId: Number(row.book_id),
  name: row.name,
  description: row.description ?? null,
  creatorId: row.creator_id === null ? null : Number(row.creator_id),
  isPublic: Boolean(row.is_public),
  isSystem: Boolean(row.is_system),
  rightsModify: Boolean(row.rights_modify),
  rightsSelect: Number(row.rights_select),
  sstamp: Number(row.sstamp),
  lastModified: Number(row.updated_at),
})

export const toField = (row: any): FieldDef => ({
  id: Number(row.id),
  categoryId: Number(row.category_id),
  name: row.name,
  code: row.code ?? null,
  fixedCode: row.fixed_code,
  type: row.type as FieldType,
  order: Number(row.order),
  description: row.description ?? null,
  readOnly: Boolean(row.read_only),
  options: json<FieldOptions>(row.options, {}),
  column: row.column_name ?? null,
  lastModified: Number(row.updated_at),
})

const toTab = (row: any): TabMeta => ({
  id: Number(row.id),
  formId: Number(row.form_id),
  categoryId: Number(row.category_id),
  viewId: row.view_id === null ? null : Number(row.view_id),
  order: Number(row.order),
  hidden: Boolean(row.hidden),
  lastModified: Number(row.updated_at),
})

const CATEGORY_HEAD_SQL =
  'SELECT c.meta_version, f.* FROM table_categories c JOIN table_forms f ON f.id = c.form_id WHERE c.id = ?'

/**
 * Reads smart-table metadata. Category metadata (fields, views, filters) is
 * cached in process and re-read when the category's meta_version changes, so
 * a page read costs one small version query instead of five.
 */
@inject()
export class MetaService {
  private cache = new Map<number, CategoryMeta>()

  /** The form of a book, or null when the book has no smart tables yet. */
  async formOfBook(
    bookId: number,
    client: QueryClientContract = db.connection()
  ): Promise<FormMeta | null> {
    const row = await client.from('table_forms').where('book_id', bookId).first()
    return row ? toForm(row) : null
  }

  async form(formId: number): Promise<FormMeta | null> {
    const row = await db.from('table_forms').where('id', formId).first()
    return row ? toForm(row) : null
  }

  /** A category with its form, from cache when its structure has not changed. */
  async category(
    categoryId: number,
    client: QueryClientContract = db.connection()
  ): Promise<{ category: CategoryMeta; form: FormMeta } | null> {
    if (!Number.isSafeInteger(categoryId) || categoryId <= 0) return null
    // Every request revalidates: one small statement on the driver connection (app/core/native_sql.ts),
    // outside a transaction kept on SQLite until any connection commits (readCached).
    const heads = client.isTransaction
      ? await readQuery(CATEGORY_HEAD_SQL, [categoryId], client)
      : await readCached(CATEGORY_HEAD_SQL, [categoryId])
    const head = heads[0]
    if (!head) {
      this.cache.delete(categoryId)
      return null
    }
    const form = toForm(head)
    this.forms.set(categoryId, form)
    const cached = this.cache.get(categoryId)
    if (cached && cached.metaVersion === Number(head.meta_version))
      return { category: cached, form }
    const category = await this.loadCategory(categoryId, client)
    if (!category) return null
    this.cache.set(categoryId, category)
    return { category, form }
  }

  /**
   * The cached category and form, without revalidation: for a write that
   * checks `metaVersion` itself in its transaction (this.rows.updateValue).
   */
  cached(categoryId: number): { category: CategoryMeta; form: FormMeta } | null {
    const category = this.cache.get(categoryId)
    const form = this.forms.get(categoryId)
    return category && form ? { category, form } : null
  }

  /** Forms last seen per category (the form row comes with each revalidation). */
  private forms = new Map<number, FormMeta>()

  invalidate(categoryId: number) {
    this.cache.delete(categoryId)
    this.forms.delete(categoryId)
    this.linksCache.clear()
  }

  /** fieldId -> categoryId never changes for a field; a deleted field fails later at the category check. */
  private fieldHome = new Map<number, number>()
  /** form id -> link fields of the form (id, category, target), kept LINKS_TTL_MS (other instances' changes). */
  private linksCache = new Map<
    number,
    { at: number; links: { id: number; categoryId: number; target: number }[] }
  >()

  async loadCategory(
    categoryId: number,
    client: QueryClientContract = db.connection()
  ): Promise<CategoryMeta | null> {
    const row = await client.from('table_categories').where('id', categoryId).first()
    if (!row) return null
    const [fieldRows, viewRows] = await Promise.all([
      client.from('table_fields').where('category_id', categoryId).orderBy('order').orderBy('id'),
      client.from('table_views').where('category_id', categoryId).orderBy('order').orderBy('id'),
    ])
    const viewIds = viewRows.map((view: any) => view.id)
    const groupRows = viewIds.length
      ? await client.from('table_filter_groups').whereIn('view_id', viewIds)
      : []
    const groupIds = groupRows.map((group: any) => group.id)
    const filterRows = groupIds.length
      ? await client
          .from('table_filters')
          .whereIn('group_id', groupIds)
          .orderBy('order')
          .orderBy('id')
      : []
    const views: ViewMeta[] = viewRows.map((view: any) => {
      const group = groupRows.find(
        (candidate: any) => Number(candidate.view_id) === Number(view.id)
      )
      return {
        id: Number(view.id),
        categoryId,
        name: view.name,
        description: view.description ?? null,
        presentation: view.presentation,
        locked: Boolean(view.locked),
        order: Number(view.order),
        card: json(view.card, {}),
        calendar: json(view.calendar, {}),
        hiddenFields: json<number[]>(view.hidden_fields, []),
        lastModified: Number(view.updated_at),
        filterGroup: group
          ? {
              id: Number(group.id),
              operator: group.operator,
              lastModified: Number(group.updated_at),
              filters: filterRows
                .filter((filter: any) => Number(filter.group_id) === Number(group.id))
                .map((filter: any): FilterSpec => {
                  const body = json<Record<string, any>>(filter.json, {})
                  if (filter.filter_type === 'group') {
                    const nested = normalizeFilter({
                      filter_type: 'group',
                      operator: body.operator,
                      filters: body.filters ?? [],
                    })
                    return {
                      ...nested,
                      id: Number(filter.id),
                      lastModified: Number(filter.updated_at),
                    }
                  }
                  return {
                    id: Number(filter.id),
                    field_id: filter.field_id === null ? null : Number(filter.field_id),
                    filter_type: filter.filter_type,
                    json: { predicate: body.predicate ?? '', operand: body.operand ?? null },
                    lastModified: Number(filter.updated_at),
                  }
                }),
            }
          : null,
      }
    })
    return {
      id: Number(row.id),
      formId: Number(row.form_id),
      name: row.name,
      description: row.description ?? null,
      code: row.code ?? null,
      fixedCode: row.fixed_code,
      order: Number(row.order),
      locked: Boolean(row.locked),
      rightsModify: Boolean(row.rights_modify),
      rightsSelect: Number(row.rights_select),
      sysFunc: row.sys_func ?? null,
      triggerUpdateUrl: row.trigger_update_url ?? null,
      prefs: json(row.prefs, {}),
      metaVersion: Number(row.meta_version),
      sstamp: Number(row.sstamp),
      lastModified: Number(row.updated_at),
      fields: fieldRows.map(toField),
      views,
    }
  }

  async categoryIdsOfForm(formId: number): Promise<number[]> {
    const rows = await db
      .from('table_categories')
      .where('form_id', formId)
      .orderBy('order')
      .orderBy('id')
      .select('id')
    return rows.map((row) => Number(row.id))
  }

  async categoryByCode(formId: number, code: string): Promise<number | null> {
    const row = await db
      .from('table_categories')
      .where('form_id', formId)
      .where((query) => query.where('code', code).orWhere('fixed_code', code))
      .select('id')
      .first()
    return row ? Number(row.id) : null
  }

  async categoryOfField(fieldId: number): Promise<number | null> {
    if (!Number.isSafeInteger(fieldId) || fieldId <= 0) return null
    const known = this.fieldHome.get(fieldId)
    if (known) return known
    const row = await db.from('table_fields').where('id', fieldId).select('category_id').first()
    if (!row) return null
    if (this.fieldHome.size > 100_000) this.fieldHome.clear()
    this.fieldHome.set(fieldId, Number(row.category_id))
    return Number(row.category_id)
  }

  /** Link fields of a form (which tables show data of which). */
  async formLinks(formId: number, client: QueryClientContract = db.connection()) {
    const hit = this.linksCache.get(formId)
    if (hit && Date.now() - hit.at < 5000) return hit.links
    // A native statement: `client` may be a native transaction (CellWriter), which has no query builder.
    const rows = await readQuery(
      `SELECT f.id, f.category_id, f.options FROM table_fields f JOIN table_categories c ON c.id = f.category_id WHERE c.form_id = ? AND f.type = 'link'`,
      [formId],
      client
    )
    const links = rows.map((row) => ({
      id: Number(row.id),
      categoryId: Number(row.category_id),
      target: Number(json<Record<string, any>>(row.options, {}).linkCatId),
    }))
    this.linksCache.set(formId, { at: Date.now(), links })
    return links
  }

  async categoryOfView(viewId: number): Promise<number | null> {
    const row = await db.from('table_views').where('id', viewId).select('category_id').first()
    return row ? Number(row.category_id) : null
  }

  async tabs(formId: number): Promise<TabMeta[]> {
    const rows = await db.from('table_tabs').where('form_id', formId).orderBy('order').orderBy('id')
    return rows.map(toTab)
  }

  async tab(tabId: number): Promise<TabMeta | null> {
    const row = await db.from('table_tabs').where('id', tabId).first()
    return row ? toTab(row) : null
  }

  async userState(
    userId: number,
    formId: number
  ): Promise<{ lastTabId: number | null; selectedViews: Record<string, number> }> {
    const row = await db
      .from('table_user_states')
      .where('user_id', userId)
      .where('form_id', formId)
      .first()
    return {
      lastTabId: row?.last_tab_id ? Number(row.last_tab_id) : null,
      selectedViews: json(row?.selected_views, {}),
    }
  }

  /** Remembers the tab (and its view) a user last opened: UI state, not synced data, so no stamp. */
  async rememberTab(userId: number, formId: number, tab: TabMeta) {
    const state = await this.userState(userId, formId)
    if (tab.viewId) state.selectedViews[String(tab.categoryId)] = tab.viewId
    const values = { last_tab_id: tab.id, selected_views: JSON.stringify(state.selectedViews) }
    const updated = await db
      .from('table_user_states')
      .where('user_id', userId)
      .where('form_id', formId)
      .update(values)
    const count = Array.isArray(updated) ? Number(updated[0]) : Number(updated)
    if (!count) {
      try {
        await db.table('table_user_states').insert({ user_id: userId, form_id: formId, ...values })
      } catch {
        await db
          .from('table_user_states')
          .where('user_id', userId)
          .where('form_id', formId)
          .update(values)
      }
    }
  }
}
