import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { isMysql, quoteId, readMany, readQuery } from '#core/native_sql'
import { isUnknownColumn } from '#core/services/db_errors'
import { kindOf, linkTextColumn, rowTableName, sqlColumnOf } from '../lib/field_types.js'
import { normalizeGroup, type FilterGroupSpec } from '../lib/filter_compiler.js'
import { asIdList, asObject, flagOr } from '../lib/wire.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import type { TableScope } from './table_access.js'
import { compileFilters, type TextIndexDriver } from './text_index.js'
import {
  ALL_ROWS,
  PAST_THE_END,
  keptCount,
  noteCount,
  seekOffset,
  type CounterSpec,
} from './row_counters.js'

type Row = Record<string, any>

/** Pages of at most this many rows in the table's own order are sorted here (selectRows). */
const SORTED_HERE_MAX = 1000

/** The table's own order, (ord, id), of rows as read. */
const inTableOrder = (a: Row, b: Row) =>
  Number(a.ord) - Number(b.ord) || Number(a.id) - Number(b.id)

/** cellColumns' answer per metadata object (a table's change makes a new one). */
const cellColumnsOf = new WeakMap<CategoryMeta, string>()

/**
 * selectRows' `columns` for a page of cells: id, ord and what the table's fields are read from
 * (serializeCell: a field's column, a link's caption next to it, a system column only where a
 * field shows one). `t.*` also made the row's stamp and four system columns into JavaScript
 * values: on the 1M-row bench table 0.27 against 0.20 ms of a 100-row page's statement.
 */
export function cellColumns(category: CategoryMeta): string {
  let columns = cellColumnsOf.get(category)
  if (columns === undefined) {
    const names = new Set(['id', 'ord'])
    for (const field of category.fields) {
      const column = sqlColumnOf(field)
      if (!column) continue
      names.add(column)
      if (kindOf(field) === 'link') names.add(linkTextColumn(column))
    }
    columns = [...names].map((name) => `t.${quoteId(name)}`).join(', ')
    cellColumnsOf.set(category, columns)
  }
  return columns
}

/**
 * MariaDB: tables spanning `minIds` ids or more are counted as `parts` id ranges at once
 * (RowSelection.countRows; an object: the tests lower the bound).
 */
export const countSplit = { minIds: 200_000, parts: 2 }

export interface Selection {
  where: { sql: string; bindings: unknown[] }[]
  orderBy: { column: string; direction: 'asc' | 'desc' }[]
  /** Row ids to return in exactly this set (row_ids with exclude false); empty array = no rows. */
  onlyIds: number[] | null
  /**
   * The counter (services/row_counters.ts) whose rows these are, when they are every row of
   * the table or exactly a saved view's: its count and deep pages can then be read from it.
   * `where` is the selection's own as it was made: a caller that narrows it afterwards (a
   * search, a keyset) leaves the counter unused (counterOf).
   */
  counter?: CounterSpec & { where: Selection['where'] }
}

/** The selection's counter, while the selection still selects exactly the counter's rows. */
function counterOf(selection: Selection): CounterSpec | null {
  const counter = selection.counter
  if (!counter || selection.onlyIds) return null
  const { where } = selection
  if (counter.where.length !== where.length) return null
  return counter.where.every((condition, i) => condition === where[i]) ? counter : null
}

/**
 * Which rows of a table a read selects, and in what order: filterRowIds and view filters
 * compiled to SQL (lib/filter_compiler.ts), pages chosen from an index, counts. Shared by every
 * read (values pages, book tables' view row ids, pivots, reference values).
 */
@inject()
export class RowSelection {
  constructor(private meta: MetaService) {}

  /**
   * filterRowIds (docs/spec/service-interface.md 4.A.6): `{row_ids, exclude, applyViewFilters}` as JSON
   * or bracket object, or `1,2,3` / `!1,2,3`. applyViewFilters is a view id,
   * true (the user's selected view), or {filterGroup} for an unsaved view.
   */
  async selection(scope: TableScope, actor: Actor | null, raw: unknown): Promise<Selection> {
    const selection: Selection = { where: [], orderBy: [], onlyIds: null }
    if (raw === undefined || raw === null || raw === '') {
      selection.counter = { counter: ALL_ROWS, group: null, where: [] }
      return selection
    }
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
    const exclude = flagOr(object.exclude, false)
    if (rowIds.length && !exclude) {
      selection.onlyIds = rowIds
      return selection // rule 3: row_ids prevail, applyViewFilters ignored
    }
    const { group, viewId } = await this.viewGroup(scope, actor, object.applyViewFilters)
    if (group) {
      const compiled = await compileFilters(
        scope.category.fields,
        { userCode: actor?.user.code ?? null },
        group
      )
      if (compiled.where) selection.where.push(compiled.where)
      selection.orderBy = compiled.orderBy
    }
    if (rowIds.length && exclude) {
      selection.where.push({
        sql: `t.id NOT IN (${rowIds.map(() => '?').join(', ')})`,
        bindings: rowIds,
      })
    } else if (!group || viewId !== null) {
      const where = [...selection.where]
      selection.counter = group
        ? { counter: viewId!, group, where }
        : { counter: ALL_ROWS, group: null, where }
    }
    return selection
  }

  private async viewGroup(
    scope: TableScope,
    actor: Actor | null,
    raw: unknown
  ): Promise<{ group: FilterGroupSpec | null; viewId: number | null }> {
    const none = { group: null, viewId: null }
    if (raw === undefined || raw === null || raw === '') return none
    const { category } = scope
    if (typeof raw === 'object') {
      const object = raw as Record<string, any>
      return { group: normalizeGroup(object.filterGroup ?? object), viewId: null }
    }
    const text = String(raw).trim()
    if (text.startsWith('{')) {
      const object = asObject(text, 'applyViewFilters')
      return { group: normalizeGroup(object.filterGroup ?? object), viewId: null }
    }
    if (['false', '0', 'off', 'no'].includes(text.toLowerCase())) return none
    let viewId: number | null = null
    if (['true', 'on', 'yes'].includes(text.toLowerCase())) {
      const state = actor ? await this.meta.userState(actor.user.id, category.formId) : null
      viewId = state?.selectedViews[String(category.id)] ?? category.views[0]?.id ?? null
      if (viewId === null) return none
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
    return { group: view.filterGroup, viewId: view.id }
  }

  private baseQuery(category: CategoryMeta, selection: Selection) {
    const query = db.from(`${rowTableName(category.id)} as t`)
    for (const where of selection.where) query.whereRaw(`(${where.sql})`, where.bindings as any[])
    if (selection.onlyIds) query.whereIn('t.id', selection.onlyIds.length ? selection.onlyIds : [0])
    return query
  }

  private ordered(query: ReturnType<RowSelection['baseQuery']>, selection: Selection) {
    for (const order of selection.orderBy)
      query.orderByRaw(`t.${quoteId(order.column)} ${order.direction}`)
    return query.orderBy('t.ord', 'asc').orderBy('t.id', 'asc')
  }

  /** WHERE clause of a selection (filter SQL from the compiler, `?` bindings). */
  whereOf(selection: Selection) {
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
      ...selection.orderBy.map((order) => `t.${quoteId(order.column)} ${order.direction}`),
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
   * connection (app/core/native_sql.ts), rows read as arrays on SQLite (readMany).
   * `columns`: the select list (cellColumns), else every column (`t.*`).
   */
  async selectRows(
    category: CategoryMeta,
    selection: Selection,
    page: { offset: number; limit: number | null; columns?: string }
  ): Promise<Row[]> {
    if (!page.columns) return this.readRows(category, selection, page, 't.*')
    try {
      return await this.readRows(category, selection, page, page.columns)
    } catch (error) {
      // A field deleted since the caller read the table's metadata: its column is gone.
      if (!isUnknownColumn(error)) throw error
      return this.readRows(category, selection, page, 't.*')
    }
  }

  private async readRows(
    category: CategoryMeta,
    selection: Selection,
    page: { offset: number; limit: number | null },
    columns: string
  ): Promise<Row[]> {
    const table = quoteId(rowTableName(category.id))
    const order = this.orderOf(selection)
    if (page.limit === null && page.offset === 0) {
      const where = this.whereOf(selection)
      return readMany(
        `SELECT ${columns} FROM ${table} t ${where.sql} ORDER BY ${order}`,
        where.bindings
      )
    }
    const limit = Math.min(page.limit ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
    let offset = Math.floor(page.offset)
    let from = selection
    // Deep into the table's own order: the counter says from which ord to skip, and how many.
    const counter = counterOf(selection)
    if (counter && !selection.orderBy.length && offset > 0) {
      const position = await seekOffset(category.fields, category.id, counter, offset)
      if (position === PAST_THE_END) return []
      if (position) {
        from = {
          ...selection,
          where: [
            ...selection.where,
            { sql: `t.ord ${position.inclusive ? '>=' : '>'} ?`, bindings: [position.ordFrom] },
          ],
        }
        offset = position.skip
      }
    }
    const where = this.whereOf(from)
    const paged =
      `SELECT ${columns} FROM ${table} t JOIN (SELECT t.id FROM ${table} t ${where.sql} ORDER BY ${order} ` +
      `LIMIT ${Math.floor(limit)} OFFSET ${offset}) p ON p.id = t.id`
    // A page in the table's own order is put in order here: MariaDB sorts the joined rows in
    // a temporary table, an on-disk one with the rows' TEXT columns (a 100-row page of 1M rows:
    // 1.4-2.1 ms with the outer ORDER BY, 0.8-1.2 ms without). (ord, id) are numbers, which
    // compare here as in SQL; other sort columns keep their collation's ORDER BY.
    if (selection.orderBy.length || limit > SORTED_HERE_MAX)
      return readMany(`${paged} ORDER BY ${order}`, where.bindings)
    const rows = await readMany(paged, where.bindings)
    return rows.sort(inTableOrder)
  }

  /** How many rows a selection selects: from its counter when it has one, else by COUNT(*). */
  async count(category: CategoryMeta, selection: Selection): Promise<number> {
    const counter = counterOf(selection)
    if (counter) {
      const kept = await keptCount(category.fields, category.id, counter)
      if (kept !== null) return kept
    }
    const total = await this.countRows(category.id, selection)
    if (counter) noteCount(category.fields, category.id, counter, total)
    return total
  }

  /**
   * COUNT(*) of a selection. On MariaDB a table spanning at least countSplit.minIds ids is
   * counted as countSplit.parts id ranges at once, on as many pooled connections: MariaDB reads
   * each in a thread of its own, where one COUNT(*) walks the whole clustered index on one core
   * (an unindexed number's count of 1M rows from the mysql client: 218 ms, 120-140 ms as two
   * halves). Each part is exact; parts are read an instant apart, as any two requests are.
   * SQLite reads on the one thread it has.
   */
  private async countRows(categoryId: number, selection: Selection): Promise<number> {
    const table = quoteId(rowTableName(categoryId))
    const where = this.whereOf(selection)
    const single = async () => {
      const rows = await readQuery(
        `SELECT COUNT(*) AS total FROM ${table} t ${where.sql}`,
        where.bindings
      )
      return Number(rows[0]?.total ?? 0)
    }
    if (!isMysql() || selection.onlyIds) return single()
    const [span] = await readQuery(`SELECT MIN(id) AS low, MAX(id) AS high FROM ${table}`)
    const low = Number(span?.low)
    const high = Number(span?.high)
    if (!(high - low >= countSplit.minIds)) return single()
    const step = Math.ceil((high - low + 1) / countSplit.parts)
    const parts = Array.from({ length: countSplit.parts }, (_, i) => [
      low + i * step,
      Math.min(high, low + (i + 1) * step - 1),
    ])
    const counts = await Promise.all(
      parts.map(([from, to]) =>
        readQuery(
          `SELECT COUNT(*) AS total FROM ${table} t ${where.sql ? `${where.sql} AND` : 'WHERE'} t.id BETWEEN ? AND ?`,
          [...where.bindings, from, to]
        )
      )
    )
    return counts.reduce((sum, rows) => sum + Number(rows[0]?.total ?? 0), 0)
  }

  /**
   * How many rows a selection selects, counting at most `cap` + 1 (the read stops there): a
   * figure above `cap` means "more than cap". A common match is counted in the time it takes
   * to find cap + 1 of them, where COUNT(*) reads every row. `driver` (a text index's matches,
   * text_index.ts `textIndexDriver`) makes the candidates the outer loop, so that a search
   * held by few rows reads only those; when its index has gone meanwhile, the scan counts.
   */
  async countUpTo(
    category: CategoryMeta,
    selection: Selection,
    cap: number,
    driver: TextIndexDriver | null = null
  ): Promise<number> {
    const where = this.whereOf(selection)
    const table = quoteId(rowTableName(category.id))
    const limit = Math.floor(cap) + 1
    const count = async (from: string, sql: string, bindings: unknown[]) => {
      const rows = await readQuery(
        `SELECT COUNT(*) AS total FROM (SELECT 1 AS one FROM ${from} ${sql} LIMIT ${limit}) c`,
        bindings
      )
      return Number(rows[0]?.total ?? 0)
    }
    if (driver) {
      const parts = [driver.where.sql, ...(where.sql ? [where.sql.replace(/^WHERE /, '')] : [])]
      try {
        return await count(driver.from(table), `WHERE ${parts.join(' AND ')}`, [
          ...driver.where.bindings,
          ...where.bindings,
        ])
      } catch (error) {
        if (!/no such table|doesn't exist/i.test(String((error as Error)?.message))) throw error
        driver.forget()
      }
    }
    return count(`${table} t`, where.sql, where.bindings)
  }

  /** The ids of the rows a selection selects, in its order (a view's row ids). */
  async idsOf(category: CategoryMeta, selection: Selection): Promise<number[]> {
    const rows = await this.ordered(this.baseQuery(category, selection).select('t.id'), selection)
    return rows.map((row) => Number(row.id))
  }
}
