import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { quoteId } from '#core/native_sql'
import { displayText, type FieldDef } from '../lib/field_types.js'
import { FieldEncryption } from './field_encryption.js'
import type { CategoryMeta } from './meta_service.js'
import { RowSelection, type Selection } from './row_selection.js'
import { TableAccess } from './table_access.js'

type Row = Record<string, any>

/**
 * Rows read per statement: a sort on a column without an index reads the whole selection for
 * each page (a top-N sort), so pages are large; 5,000 rows of display text are a few MB.
 */
const EXPORT_PAGE = 5000

/** One key of a page order: the column and its direction (ord and id close every order). */
interface OrderKey {
  column: string
  direction: 'asc' | 'desc'
}

/** What an export writes: its columns, then its rows as display text, one page at a time. */
export interface TableExportPlan {
  categoryName: string
  fields: FieldDef[]
  pages: AsyncIterable<string[][]>
}

/**
 * Every row a read selects (filterRowIds, as getTableValues reads it: the same RowSelection),
 * in its order, as display text: the console's CSV export. Pages follow each other by keyset
 * (the row after the last one read, by the selection's order, then ord and id), not by OFFSET,
 * so the millionth row costs what the first does, and only one page is held at a time.
 * Encrypted cells are masked (an export unlocks nothing); comment and activity cells are left
 * empty (they are threads, not values).
 */
@inject()
export class TableExport {
  constructor(
    private access: TableAccess,
    private rowSelection: RowSelection,
    private encryption: FieldEncryption
  ) {}

  /**
   * Checks the reader's right and the filters before anything is written (a refusal is an
   * RpcError the caller answers), then reads lazily. `fieldIds` chooses and orders the columns.
   */
  async open(
    actor: Actor,
    input: { catId: number; b_o?: string; filterRowIds?: unknown; fieldIds?: number[] | null },
    pageSize = EXPORT_PAGE
  ): Promise<TableExportPlan> {
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    const { category } = scope
    const selection = await this.rowSelection.selection(scope, actor, input.filterRowIds)
    const fields = (
      input.fieldIds
        ? input.fieldIds.map((id) => category.fields.find((field) => field.id === id))
        : category.fields
    ).filter((field): field is FieldDef => Boolean(field))
    const unlocked = await this.encryption.unlock(category, undefined, actor.user.id)
    const pages = this.pages(category, selection, pageSize, async (rows) => {
      this.encryption.reveal(category, rows, unlocked)
      return rows.map((row) => fields.map((field) => cellText(field, row)))
    })
    return { categoryName: category.name, fields, pages }
  }

  private async *pages(
    category: CategoryMeta,
    selection: Selection,
    pageSize: number,
    shape: (rows: Row[]) => Promise<string[][]>
  ): AsyncGenerator<string[][]> {
    const keys: OrderKey[] = [
      ...selection.orderBy,
      { column: 'ord', direction: 'asc' },
      { column: 'id', direction: 'asc' },
    ]
    let last: Row | null = null
    for (;;) {
      const where = last ? [...selection.where, after(keys, last)] : selection.where
      const rows = await this.rowSelection.selectRows(
        category,
        { ...selection, where },
        { offset: 0, limit: pageSize }
      )
      if (rows.length === 0) return
      last = rows[rows.length - 1]
      yield await shape(rows)
      if (rows.length < pageSize) return
    }
  }
}

/** A cell as export text: what the grid shows (link captions, lists joined). */
function cellText(field: FieldDef, row: Row): string {
  if (field.type === 'comments' || field.type === 'activity') return ''
  if (field.type === 'checkbox') return displayText(field, row) === 'true' ? 'yes' : 'no'
  return displayText(field, row)
}

/**
 * The rows after `last` in the order `keys`: (k1 after L1) or (k1 = L1 and k2 after L2) ...
 * NULL sorts first ascending and last descending on SQLite and MariaDB alike.
 */
function after(keys: OrderKey[], last: Row) {
  const alternatives: string[] = []
  const bindings: unknown[] = []
  const equal: string[] = []
  const equalBindings: unknown[] = []
  for (const key of keys) {
    const column = `t.${quoteId(key.column)}`
    const value = last[key.column]
    const isNull = value === null || value === undefined
    let beyond: string | null
    const beyondBindings: unknown[] = []
    if (key.direction === 'asc') {
      beyond = isNull ? `${column} IS NOT NULL` : `${column} > ?`
      if (!isNull) beyondBindings.push(value)
    } else {
      beyond = isNull ? null : `(${column} < ? OR ${column} IS NULL)`
      if (!isNull) beyondBindings.push(value)
    }
    if (beyond) {
      alternatives.push([...equal, beyond].join(' AND '))
      bindings.push(...equalBindings, ...beyondBindings)
    }
    equal.push(isNull ? `${column} IS NULL` : `${column} = ?`)
    if (!isNull) equalBindings.push(value)
  }
  return { sql: alternatives.map((part) => `(${part})`).join(' OR '), bindings }
}
