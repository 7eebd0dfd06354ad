import { inject } from '@adonisjs/core'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import {
  COMPUTED_TYPES,
  displayText,
  kindOf,
  linkTextColumn,
  rowTableName,
  serializeCell,
  sqlColumnOf,
  type FieldDef,
} from '../lib/field_types.js'
import { evaluate, parseFormula, type FormulaNode } from '../lib/formula.js'
import { chunks, parseIds, type Row } from '../lib/row_sql.js'
import { quoteId, readQuery } from '#core/native_sql'
import { MetaService, type CategoryMeta } from './meta_service.js'

/** The field that names a row when another table links to it: the first stored, plain field. */
export function primaryField(category: CategoryMeta): FieldDef | undefined {
  return (
    category.fields.find(
      (field) =>
        ['text', 'number', 'date', 'enum', 'user'].includes(kindOf(field)) &&
        !COMPUTED_TYPES.has(field.type)
    ) ?? category.fields.find((field) => sqlColumnOf(field) !== null)
  )
}

/** The stored columns serializeCell reads for `field` (a link's ids and its caption). */
function displayColumns(field: FieldDef | undefined): string[] {
  const column = field ? sqlColumnOf(field) : null
  if (!column) return []
  return kindOf(field!) === 'link' ? [column, linkTextColumn(column)] : [column]
}

/** A rollup over the linked rows' values of `field` (count needs no field). */
export function rollup(fn: string, rows: Row[], field: FieldDef | undefined): number | null {
  if (fn === 'count') return rows.length
  if (!field) return null
  const numbers = rows
    .map((row) => serializeCell(field, row).value)
    .filter((value) => value !== null && value !== '' && Number.isFinite(Number(value)))
    .map(Number)
  if (numbers.length === 0) return fn === 'sum' ? 0 : null
  switch (fn) {
    case 'sum':
      return numbers.reduce((total, value) => total + value, 0)
    case 'min':
      return Math.min(...numbers)
    case 'max':
      return Math.max(...numbers)
    default:
      return numbers.reduce((total, value) => total + value, 0) / numbers.length
  }
}

/**
 * Computed columns of rows held in memory: link captions, lookups, rollups
 * (one query per link field for all rows) and formulas. Every write computes
 * its rows before storing them; the recompute service computes the rows of
 * other tables that show data of written ones.
 */
@inject()
export class ComputedFields {
  /** Parsed formulas by source text (null: the formula does not parse, its value is empty). */
  private formulas = new Map<string, FormulaNode | null>()

  constructor(private meta: MetaService) {}

  /**
   * Fills the computed columns of `states`; link-derived ones only when `linksChanged`.
   * `known`: linked rows the caller read in `trx` (whole), by table; only the others are read.
   */
  async computeRows(
    trx: TransactionClientContract,
    category: CategoryMeta,
    states: Row[],
    linksChanged = true,
    known?: Map<number, Map<number, Row>>
  ) {
    const links = linksChanged
      ? category.fields.filter((field) => field.type === 'link' && field.column)
      : []
    const targets = new Map<number, { meta: CategoryMeta; rows: Map<number, Row> }>()
    for (const link of links) {
      const targetId = link.options.linkCatId
      if (!targetId) continue
      const found = targetId === category.id ? null : await this.meta.category(targetId, trx)
      const meta = targetId === category.id ? category : found?.category
      if (!meta) continue
      const ids = new Set<number>()
      for (const state of states) for (const id of parseIds(state[link.column!])) ids.add(id)
      const entry = targets.get(link.id) ?? { meta, rows: new Map<number, Row>() }
      const read = known?.get(meta.id)
      const missing = read
        ? [...ids].filter((id) => {
            const row = read.get(id)
            if (row) entry.rows.set(id, row)
            return !row
          })
        : [...ids]
      await this.readLinked(trx, category, meta.id, missing, entry.rows, meta)
      targets.set(link.id, entry)
    }
    // Per link, once per call: its target, the target's naming field and the caption's column.
    const captions = links.map((link) => {
      const target = targets.get(link.id)
      return {
        column: link.column!,
        textColumn: linkTextColumn(link.column!),
        rows: target?.rows,
        primary: target ? primaryField(target.meta) : undefined,
      }
    })
    const derived = linksChanged
      ? category.fields.filter(
          (field) => (field.type === 'lookup' || field.type === 'rollup') && field.column
        )
      : []
    const formulas = this.hasFormulas(category)
    for (const state of states) {
      for (const { column, textColumn, rows, primary } of captions) {
        const ids = parseIds(state[column])
        state[textColumn] = ids.length
          ? ids
              .map((id) => {
                const row = rows?.get(id)
                return row && primary ? displayText(primary, row) : String(id)
              })
              .join(', ')
          : null
      }
      for (const field of derived) {
        if (!field.column) continue
        const link = links.find((candidate) => candidate.id === field.options.linkFieldId)
        const target = link ? targets.get(link.id) : undefined
        const targetField = target?.meta.fields.find(
          (candidate) => candidate.id === field.options.targetFieldId
        )
        const rows =
          link && target
            ? parseIds(state[link.column!])
                .map((id) => target.rows.get(id))
                .filter((row): row is Row => Boolean(row))
            : []
        if (field.type === 'lookup') {
          const texts = targetField
            ? rows.map((row) => displayText(targetField, row)).filter((text) => text !== '')
            : []
          state[field.column] = texts.length ? texts.join(', ') : null
        } else {
          state[field.column] = rollup(field.options.rollup ?? 'count', rows, targetField)
        }
      }
      if (formulas) this.computeFormulas(category, state)
    }
  }

  /**
   * Rows of table `targetId` that `category`'s links point to, by id, into `into`, with only the
   * columns computeRows reads of them (linkedColumns). A bulk write reads up to 1,000 linked rows
   * a statement, and making every column of each an object property was half the read's cost
   * (bench:tables bulk: 5.4 µs a written row for `SELECT *`, ~0.9 µs now). `known`: the target's
   * metadata when the caller has it (computeRows); otherwise it is revalidated in `client`.
   */
  async readLinked(
    client: QueryClientContract,
    category: CategoryMeta,
    targetId: number,
    ids: number[],
    into: Map<number, Row>,
    known?: CategoryMeta
  ) {
    if (ids.length === 0) return
    let target = known ?? (targetId === category.id ? category : undefined)
    if (!target) {
      const found = await this.meta.category(targetId, client)
      target = found?.category
    }
    // A table without metadata shows no captions (computeRows skips it): its ids are checked.
    const columns = target ? this.linkedColumns(category, target) : ['id']
    const select = columns.map(quoteId).join(', ')
    const table = quoteId(rowTableName(targetId))
    for (const part of chunks(ids, 1000)) {
      const rows = await readQuery(
        `SELECT ${select} FROM ${table} WHERE id IN (${part.map(() => '?').join(', ')})`,
        part,
        client
      )
      for (const row of rows) into.set(Number(row.id), row)
    }
  }

  /**
   * The columns of `target`'s rows that computeRows reads when `category` links to it: the id,
   * what names a row (primaryField: the caption) and the fields `category`'s lookups and rollups
   * through a link to `target` show. Kept by metadata object (a new version is a new object).
   */
  linkedColumns(category: CategoryMeta, target: CategoryMeta): string[] {
    let byTarget = this.linkedColumnsOf.get(category)
    if (!byTarget) this.linkedColumnsOf.set(category, (byTarget = new WeakMap()))
    let columns = byTarget.get(target)
    if (!columns) {
      const shown = new Set<string>(['id', ...displayColumns(primaryField(target))])
      for (const field of category.fields) {
        if ((field.type !== 'lookup' && field.type !== 'rollup') || !field.column) continue
        const link = category.fields.find((candidate) => candidate.id === field.options.linkFieldId)
        if (link?.options.linkCatId !== target.id) continue
        const targetField = target.fields.find(
          (candidate) => candidate.id === field.options.targetFieldId
        )
        for (const column of displayColumns(targetField)) shown.add(column)
      }
      columns = [...shown]
      byTarget.set(target, columns)
    }
    return columns
  }

  private linkedColumnsOf = new WeakMap<CategoryMeta, WeakMap<CategoryMeta, string[]>>()

  /** Formula columns of one row, from its other values ({Name}, {f<id>} or {code} references). */
  computeFormulas(category: CategoryMeta, state: Row) {
    for (const field of category.fields) {
      if (field.type !== 'formula' || !field.column) continue
      const tree = this.compiled(field.options.formula ?? '')
      if (!tree) {
        state[field.column] = null
        continue
      }
      const value = evaluate(tree, (name) => {
        const lower = name.toLowerCase()
        const ref = category.fields.find(
          (candidate) =>
            candidate.name.toLowerCase() === lower ||
            `f${candidate.id}` === lower ||
            candidate.code === name
        )
        if (!ref) return null
        const cell = serializeCell(ref, state)
        if (Array.isArray(cell.value)) return cell.text ?? cell.value.join(', ')
        if (cell.value === null || cell.value === undefined) return null
        if (typeof cell.value === 'object') return JSON.stringify(cell.value)
        return cell.value as any
      })
      if (field.options.resultType === 'text')
        state[field.column] = value === null ? null : String(value)
      else {
        const number = typeof value === 'boolean' ? Number(value) : Number(value)
        state[field.column] =
          value === null || value === '' || !Number.isFinite(number) ? null : number
      }
    }
  }

  /** Whether the table has stored formula columns (a cell write must then read its row). */
  hasFormulas(category: CategoryMeta) {
    return category.fields.some((field) => field.type === 'formula' && field.column)
  }

  /** The stored columns of a row (what an INSERT or UPDATE of the row table writes). */
  columnsOf(category: CategoryMeta, state: Row): Row {
    const out: Row = {
      ord: state.ord ?? 0,
      sstamp: state.sstamp,
      created_at: state.created_at ?? null,
      updated_at: state.updated_at ?? null,
      created_by: state.created_by ?? null,
      updated_by: state.updated_by ?? null,
    }
    for (const field of category.fields) {
      if (!field.column) continue
      out[field.column] = state[field.column] ?? (kindOf(field) === 'bool' ? false : null)
      if (field.type === 'link')
        out[linkTextColumn(field.column)] = state[linkTextColumn(field.column)] ?? null
    }
    return out
  }

  private compiled(source: string): FormulaNode | null {
    if (!this.formulas.has(source)) {
      try {
        this.formulas.set(source, parseFormula(source))
      } catch {
        this.formulas.set(source, null)
      }
    }
    return this.formulas.get(source)!
  }
}
