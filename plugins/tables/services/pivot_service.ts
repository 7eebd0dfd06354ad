import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import logger from '@adonisjs/core/services/logger'
import { RpcError, rpcError } from '#core/rpc/errors'
import { quoteId, readQuery } from '#core/native_sql'
import { StampService } from '#core/services/stamp_service'
import {
  displayText,
  kindOf,
  rowTableName,
  sideTableName,
  sqlColumnOf,
  storageOf,
  type FieldDef,
} from '../lib/field_types.js'
import { chunks } from '../lib/row_sql.js'
import { primaryField } from './computed_fields.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import { TableAccess, type TableScope } from './table_access.js'
import { userNamesOf } from './user_names.js'
import { RowSelection, type Selection } from './row_selection.js'
import { ensurePivotIndex } from './pivot_index.js'

export const PIVOT_OPERATIONS = ['count', 'sum', 'avg', 'min', 'max'] as const
export const DATE_GROUPINGS = ['day', 'week', 'month', 'year'] as const
type PivotOperation = (typeof PIVOT_OPERATIONS)[number]
type DateGrouping = (typeof DATE_GROUPINGS)[number]

/** Kinds a pivot groups by (spec 2.6; multi enums and links through their side tables). */
const GROUPABLE = new Set(['text', 'enum', 'multi', 'date', 'link', 'user', 'bool'])

export interface PivotInput {
  catId: number
  b_o?: string
  p_field_hz?: number
  p_field_vt?: number
  p_field_va?: number
  p_field_co?: string
  dateGrouping?: string
  viewId?: number
  filterRowIds?: unknown
}

export interface PivotKey {
  key: string | number | null
  text: string
}

/** Stored forms a plain index covers whole (a long text would need a prefix). */
const INDEXABLE_STORAGE = new Set(['string', 'date', 'boolean', 'bigint', 'double'])
const hasSideTableKind = (field: FieldDef) => ['multi', 'link'].includes(kindOf(field))

/** One grouping dimension: its SQL key expression and the join it needs. */
interface Axis {
  field: FieldDef
  expr: string
  join: string
  grouping: DateGrouping | null
  /** The row table's column the key is computed from (null: a side table's value). */
  column: string | null
  /** The key expression computed from another reference to that column (pre-grouped rows). */
  keyOf: (source: string) => string
}

const isMysql = () => db.connection().dialect.name === 'mysql'

const invalid = (name: string, message: string) =>
  rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: ${message}`, { field: name })

/** The ISO week ('2024-W02') of a Monday given as 'YYYY-MM-DD'. */
export function isoWeek(monday: string): string {
  const date = new Date(`${monday}T00:00:00Z`)
  const thursday = new Date(date.getTime() + 3 * 86_400_000)
  const year = thursday.getUTCFullYear()
  const first = new Date(Date.UTC(year, 0, 1))
  const week = Math.floor((thursday.getTime() - first.getTime()) / 86_400_000 / 7) + 1
  return `${year}-W${String(week).padStart(2, '0')}`
}

/**
 * getTablePivotValues (spec 2.6 pivot settings): a two-way aggregate of a
 * table's rows after the view's filters, computed by SQL GROUP BY on the row
 * table (multi enums and links through their side tables, so a row with two
 * links counts in both groups). Totals are their own GROUP BY queries, so a
 * total counts a row once even when it sits in several groups.
 */
@inject()
export class PivotService {
  constructor(
    private stamps: StampService,
    private meta: MetaService,
    private access: TableAccess,
    private rowSelection: RowSelection
  ) {}

  /**
   * The table's pivot index (README, "Pivot index"): on the columns of its saved pivot (the
   * horizontal and vertical fields, and the value field when there is one), so that the saved
   * pivot's groups are read in index order (pregroupedSql) instead of sorting every row. Made
   * when updateTable saves the settings, dropped when they name no indexable field; an axis
   * through a side table (multi enum, link) or a long text column gets none.
   */
  async ensureIndex(categoryId: number) {
    const found = await this.meta.category(categoryId)
    if (!found) return
    const { category } = found
    let columns: string[] = []
    try {
      const settings = this.settings(category, { catId: category.id })
      const fields = [settings.hz, settings.vt, settings.va].filter(
        (field): field is FieldDef => field !== null
      )
      const indexable = fields.every(
        (field) => !hasSideTableKind(field) && INDEXABLE_STORAGE.has(storageOf(field))
      )
      if (indexable) columns = [...new Set(fields.map((field) => sqlColumnOf(field)!))]
    } catch (error) {
      if (!(error instanceof RpcError)) throw error // no saved pivot, or one naming a lost field
    }
    try {
      await ensurePivotIndex(category.id, columns)
    } catch (error) {
      // The settings are saved; the pivot answers the same without its index, only slower.
      logger.error({ err: error, categoryId }, 'pivot index not made')
    }
  }

  async pivot(actor: Actor | null, input: PivotInput) {
    const sstamp = await this.stamps.watermark()
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    const { category } = scope
    const settings = this.settings(category, input)
    const hz = this.axis(category, 'p_field_hz', settings.hz, settings.grouping, 'h')
    const vt =
      settings.vt === null
        ? null
        : this.axis(category, 'p_field_vt', settings.vt, settings.grouping, 'v')
    const aggregate = this.aggregate(category, settings.operation, settings.va)
    const where = this.rowSelection.whereOf(await this.selectionOf(scope, actor, input))

    const table = quoteId(rowTableName(category.id))
    const run = (axes: Axis[]) => {
      if (this.pregroupable(settings.operation, axes))
        return readQuery(
          this.pregroupedSql(table, axes, aggregate, where.sql, settings.operation),
          where.bindings
        )
      const keys = axes.map((axis, index) => `${axis.expr} AS k${index}`)
      const sql =
        `SELECT ${[...keys, `${aggregate} AS v`].join(', ')} FROM ${table} t ` +
        `${axes.map((axis) => axis.join).join(' ')} ${where.sql}` +
        (axes.length ? ` GROUP BY ${axes.map((_, index) => `k${index}`).join(', ')}` : '')
      return readQuery(sql, where.bindings)
    }
    // One scan when every total can be folded from the finest groups (foldable); else one per level.
    const foldable = this.foldable(settings.operation, vt ? [hz, vt] : [hz])
    const cells = vt ? await run([hz, vt]) : []
    const hzRows = foldable && vt ? this.fold(settings.operation, cells, 'k0') : await run([hz])
    const [whole] = foldable ? this.fold(settings.operation, hzRows, null) : await run([])
    const all = whole?.v ?? null
    const hzKeys = await this.keys(
      hz,
      hzRows.map((row) => row.k0)
    )
    const index = (keys: PivotKey[]) => new Map(keys.map((key, i) => [String(key.key), i]))
    const hzIndex = index(hzKeys)
    const empty = settings.operation === 'count' ? 0 : null
    const number = (value: unknown) =>
      value === null || value === undefined ? empty : Number(value)
    const hzTotals: (number | null)[] = hzKeys.map(() => empty)
    for (const row of hzRows) hzTotals[hzIndex.get(String(this.keyOf(hz, row.k0)))!] = number(row.v)

    const pivot = {
      hz: hzKeys,
      vt: [] as PivotKey[],
      values: [] as (number | null)[][],
      totals: { hz: hzTotals, vt: [] as (number | null)[], all: number(all) },
    }
    if (vt) {
      const vtRows = foldable
        ? this.fold(settings.operation, cells, 'k1').map((row) => ({ k0: row.k1, v: row.v }))
        : await run([vt])
      pivot.vt = await this.keys(
        vt,
        vtRows.map((row) => row.k0)
      )
      const vtIndex = index(pivot.vt)
      pivot.values = pivot.vt.map(() => hzKeys.map(() => empty))
      for (const row of cells) {
        const column = hzIndex.get(String(this.keyOf(hz, row.k0)))
        const line = vtIndex.get(String(this.keyOf(vt, row.k1)))
        if (column !== undefined && line !== undefined) pivot.values[line][column] = number(row.v)
      }
      pivot.totals.vt = pivot.vt.map(() => empty)
      for (const row of vtRows)
        pivot.totals.vt[vtIndex.get(String(this.keyOf(vt, row.k0)))!] = number(row.v)
    }
    return {
      sstamp,
      catId: category.id,
      settings: {
        p_field_hz: hz.field.id,
        p_field_vt: vt?.field.id ?? null,
        p_field_va: settings.va?.id ?? null,
        p_field_co: settings.operation,
        dateGrouping: hz.grouping ?? vt?.grouping ?? null,
      },
      pivot,
    }
  }

  /**
   * Whether a total can be folded from finer groups: each row sits in exactly one group of each
   * axis (no multi enum, no link), the aggregate is exact on partial results (count, min, max:
   * a sum or an average of doubles would round differently), and two keys the database groups
   * as one are one in JavaScript too (a date, a checkbox, an enum without values that differ
   * only by case: MariaDB's collation groups texts and user codes case-insensitively).
   */
  private foldable(operation: PivotOperation, axes: Axis[]) {
    if (operation !== 'count' && operation !== 'min' && operation !== 'max') return false
    return axes.every((axis) => {
      const kind = kindOf(axis.field)
      if (kind === 'date' || kind === 'bool') return true
      if (kind !== 'enum') return false
      const values = (axis.field.options.values ?? []).map((value) => String(value).toLowerCase())
      return new Set(values).size === values.length
    })
  }

  /**
   * Whether the groups can be computed from groups of the stored values (pregroupedSql): an
   * aggregate that is exact on partial results (count, min, max), axes that are columns of the
   * row table, and no date with a time (its stored values are nearly as many as the rows: a
   * date without a time has at most 366 a year, folded into its weeks, months or years).
   */
  private pregroupable(operation: PivotOperation, axes: Axis[]) {
    if (operation !== 'count' && operation !== 'min' && operation !== 'max') return false
    if (axes.length === 0) return false
    return axes.every(
      (axis) =>
        axis.column !== null &&
        (kindOf(axis.field) !== 'date' ||
          (axis.field.type === 'date' && !axis.field.options.withTime))
    )
  }

  /**
   * The groups of `axes` in two steps: the rows grouped by the stored values of the axes'
   * columns (GROUP BY the columns themselves: read in the order of an index on them, the
   * table's pivot index, without a sort and without a function call per row), then those
   * groups folded into the keys (a month from its days, NULL with '') by the same aggregate
   * (counts add up, minima and maxima compare): the answer of the one-step GROUP BY.
   */
  private pregroupedSql(
    table: string,
    axes: Axis[],
    aggregate: string,
    where: string,
    operation: PivotOperation
  ) {
    const raws = axes.map((axis) => `t.${quoteId(axis.column!)}`)
    const inner =
      `SELECT ${[...raws.map((raw, index) => `${raw} AS r${index}`), `${aggregate} AS v`].join(', ')} ` +
      `FROM ${table} t ${where} GROUP BY ${raws.join(', ')}`
    const outer = operation === 'count' ? 'SUM' : operation.toUpperCase()
    const keys = axes.map((axis, index) => `${axis.keyOf(`p.r${index}`)} AS k${index}`)
    return (
      `SELECT ${[...keys, `${outer}(p.v) AS v`].join(', ')} FROM (${inner}) p ` +
      `GROUP BY ${axes.map((_, index) => `k${index}`).join(', ')}`
    )
  }

  /**
   * Folds grouped rows ({k0, k1, v}) into the groups of key `by` (null: one group of all), with
   * the aggregate's own rule: counts add up, minima and maxima compare (an empty group, null,
   * is skipped).
   */
  private fold(operation: PivotOperation, rows: Record<string, any>[], by: 'k0' | 'k1' | null) {
    const groups = new Map<unknown, { k0: unknown; k1: unknown; v: number | null }>()
    for (const row of rows) {
      const key = by === null ? null : row[by]
      const value = row.v === null || row.v === undefined ? null : Number(row.v)
      const group = groups.get(key)
      if (!group) {
        groups.set(key, { k0: key, k1: key, v: value })
        continue
      }
      if (value === null) continue
      if (group.v === null) group.v = value
      else if (operation === 'count') group.v += value
      else if (operation === 'min') group.v = Math.min(group.v, value)
      else group.v = Math.max(group.v, value)
    }
    return [...groups.values()]
  }

  /** Parameters first, else the table's saved settings (its prefs, set by updateTable). */
  private settings(category: CategoryMeta, input: PivotInput) {
    const saved = input.p_field_hz === undefined ? category.prefs : {}
    const fieldOf = (name: 'p_field_hz' | 'p_field_vt' | 'p_field_va') => {
      const raw = input[name] ?? saved[name]
      if (raw === undefined || raw === null || raw === '' || raw === 0) return null
      const id = Number(raw)
      const field = category.fields.find((candidate) => candidate.id === id)
      if (!field) throw invalid(name, `${raw} is not a field of table "${category.name}"`)
      return field
    }
    const hz = fieldOf('p_field_hz')
    if (!hz)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: p_field_hz', { field: 'p_field_hz' })
    const operation = String(input.p_field_co ?? saved.p_field_co ?? 'count').trim() || 'count'
    if (!PIVOT_OPERATIONS.includes(operation as PivotOperation))
      throw invalid('p_field_co', `"${operation}" (count, sum, avg, min or max)`)
    const grouping = String(input.dateGrouping ?? saved.dateGrouping ?? 'month').trim() || 'month'
    if (!DATE_GROUPINGS.includes(grouping as DateGrouping))
      throw invalid('dateGrouping', `"${grouping}" (day, week, month or year)`)
    return {
      hz,
      vt: fieldOf('p_field_vt'),
      va: fieldOf('p_field_va'),
      operation: operation as PivotOperation,
      grouping: grouping as DateGrouping,
    }
  }

  /** filterRowIds as getTableValues reads it, narrowed by the filters of viewId when given. */
  private async selectionOf(scope: TableScope, actor: Actor | null, input: PivotInput) {
    const selection: Selection = await this.rowSelection.selection(scope, actor, input.filterRowIds)
    if (input.viewId) {
      const view = await this.rowSelection.selection(scope, actor, {
        applyViewFilters: String(input.viewId),
      })
      selection.where.push(...view.where)
    }
    return selection
  }

  private axis(
    category: CategoryMeta,
    name: string,
    field: FieldDef,
    grouping: DateGrouping,
    alias: string
  ): Axis {
    const kind = kindOf(field)
    if (field.options.encryption)
      throw rpcError(
        'ENCRYPTED_FIELD_UNSEARCHABLE',
        `Field "${field.name}" (${field.id}) is encrypted: it cannot group a pivot`,
        { field: name, fieldId: field.id }
      )
    if (!GROUPABLE.has(kind))
      throw invalid(name, `field "${field.name}" (${field.type}) cannot group a pivot`)
    if (kind === 'multi' || kind === 'link') {
      const side = quoteId(sideTableName(category.id, field.id))
      return {
        field,
        expr: `${alias}.value`,
        join: `LEFT JOIN ${side} ${alias} ON ${alias}.row_id = t.id`,
        grouping: null,
        column: null,
        keyOf: (source) => source,
      }
    }
    const column = sqlColumnOf(field)!
    const keyOf =
      kind === 'bool'
        ? (source: string) => `CASE WHEN ${source} THEN 1 ELSE 0 END`
        : kind === 'date'
          ? (source: string) => this.dateKey(source, grouping)
          : (source: string) => `NULLIF(${source}, '')`
    return {
      field,
      expr: keyOf(`t.${quoteId(column)}`),
      join: '',
      grouping: kind === 'date' ? grouping : null,
      column,
      keyOf,
    }
  }

  /** The group key of a stored date ('YYYY-MM-DD[ HH:MM:SS]'): a week is keyed by its Monday. */
  private dateKey(column: string, grouping: DateGrouping) {
    const day = `SUBSTR(${column}, 1, 10)`
    switch (grouping) {
      case 'year':
        return `NULLIF(SUBSTR(${column}, 1, 4), '')`
      case 'month':
        return `NULLIF(SUBSTR(${column}, 1, 7), '')`
      case 'day':
        return `NULLIF(${day}, '')`
      default:
        return isMysql()
          ? `DATE_FORMAT(DATE_SUB(DATE(${day}), INTERVAL WEEKDAY(${day}) DAY), '%Y-%m-%d')`
          : `date(${day}, 'weekday 0', '-6 days')`
    }
  }

  private aggregate(category: CategoryMeta, operation: PivotOperation, va: FieldDef | null) {
    if (operation === 'count')
      return va && sqlColumnOf(va) ? `COUNT(t.${quoteId(sqlColumnOf(va)!)})` : 'COUNT(*)'
    if (!va)
      throw rpcError(
        'MISSING_PARAMETER',
        `Missing parameter: p_field_va (${operation} needs a number field)`,
        {
          field: 'p_field_va',
        }
      )
    if (kindOf(va) !== 'number' || !sqlColumnOf(va))
      throw invalid('p_field_va', `field "${va.name}" of table "${category.name}" is not a number`)
    // As a double: MariaDB answers SUM and AVG of integers as DECIMAL (AVG rounded to 4 places).
    return `${operation.toUpperCase()}(CAST(t.${quoteId(sqlColumnOf(va)!)} AS DOUBLE))`
  }

  /** A key as the answer carries it: numbers for links and checkboxes, null for the empty group. */
  private keyOf(axis: Axis, raw: unknown): string | number | null {
    if (raw === null || raw === undefined || raw === '') return null
    const kind = kindOf(axis.field)
    if (kind === 'link' || kind === 'bool') return Number(raw)
    return String(raw)
  }

  /** The groups found, ordered (enum values in the field's order, others ascending, empty last), with their text. */
  private async keys(axis: Axis, raws: unknown[]): Promise<PivotKey[]> {
    const keys = [...new Set(raws.map((raw) => this.keyOf(axis, raw)))]
    const present = keys.filter((key): key is string | number => key !== null)
    const kind = kindOf(axis.field)
    const order = axis.field.options.values ?? []
    present.sort((a, b) => {
      if (kind === 'enum' || kind === 'multi') {
        const [i, j] = [order.indexOf(String(a)), order.indexOf(String(b))]
        if (i !== j) return (i < 0 ? Infinity : i) - (j < 0 ? Infinity : j)
      }
      if (typeof a === 'number' && typeof b === 'number') return a - b
      return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0
    })
    const texts = await this.texts(axis, present)
    const out: PivotKey[] = present.map((key) => ({ key, text: texts.get(key) ?? String(key) }))
    if (keys.includes(null)) out.push({ key: null, text: '' })
    return out
  }

  private async texts(axis: Axis, keys: (string | number)[]) {
    const texts = new Map<string | number, string>()
    const kind = kindOf(axis.field)
    if (kind === 'bool') for (const key of keys) texts.set(key, key ? 'true' : 'false')
    if (axis.grouping === 'week') for (const key of keys) texts.set(key, isoWeek(String(key)))
    if (kind === 'user')
      for (const [code, name] of await userNamesOf(keys.map(String))) texts.set(code, name)
    if (kind === 'link' && axis.field.options.linkCatId) {
      const found = await this.meta.category(axis.field.options.linkCatId)
      const primary = found ? primaryField(found.category) : undefined
      if (found && primary) {
        for (const part of chunks(keys.map(Number), 500)) {
          const rows = await db.from(rowTableName(found.category.id)).whereIn('id', part)
          for (const row of rows) texts.set(Number(row.id), displayText(primary, row))
        }
      }
    }
    return texts
  }
}
