import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { RpcError, rpcError } from '#core/rpc/errors'
import stamps from '#core/services/stamps'
import queue from '#core/services/queue'
import { isTransientDbError } from '#core/services/db_errors'
import {
  COMPUTED_TYPES,
  convertInput,
  displayText,
  formatDateTime,
  hasSideTable,
  kindOf,
  linkTextColumn,
  rowTableName,
  serializeCell,
  sideTableName,
  sqlColumnOf,
  type FieldDef,
} from './field_types.js'
import { evaluate, parseFormula, type FormulaNode } from './formula.js'
import { metaService, type CategoryMeta } from './meta_service.js'
import { commentsService } from './comments_service.js'
import { quoteId, readQuery, trxQuery, writeQuery } from '#core/native_sql'
import { categoryOfRowId } from './schema_service.js'
import { tableAccess, type TableScope } from './table_access.js'
import type { RowsChanged } from '../events.js'

type Row = Record<string, any>

export interface RowWrite {
  /** A server row id, or a temporary id starting with `tmp` (scoped to this request). */
  key: string
  /** fieldId -> raw wire value. */
  values: Record<string, unknown>
}

export interface WriteOptions {
  categoryId?: number
  b_o?: unknown
  linkSeparator?: string
  bypassUrlTrigger?: boolean
  source?: 'api' | 'socket'
}

export interface WriteResult {
  categoryId: number
  newRows: { id: number; tmpId: string; info: { order: number } }[]
  /** Final state of every written row, for `rows` answers. */
  rows: { id: number; fields: Record<string, { value: unknown; text?: string }> }[]
  created: number
  modified: number
  formLastModified: number
}

/** What updateTableValue answers from (neither the operation nor the socket sends row state). */
export type UpdateValueResult = Pick<
  WriteResult,
  'categoryId' | 'newRows' | 'created' | 'modified' | 'formLastModified'
>

const CHUNK = 500
/** One-cell writes per group-commit transaction. */
const CELL_BATCH = 64
/**
 * Batch transactions in flight at once. One on both databases: SQLite has one
 * writer; on MariaDB, 2 or 4 overlapping batches (each on its own connection)
 * measured no faster than one, and often slower (8 concurrent writers:
 * 2,800-4,150/s with 2, 1,700-3,400/s with 4, 3,970-4,020/s with 1, this
 * shared 2-core machine): they split the queue into smaller batches, and
 * each transaction costs ~0.15 ms of JavaScript (Lucid/knex) on a saturated
 * CPU, more than the log flush that overlapping would hide. The batch rows
 * bookkeeping below keeps a larger value correct (a row is never in two
 * batches at once).
 */
const CELL_DRAINERS = 1
/** Row ids per tables.recompute job. */
const RECOMPUTE_JOB_ROWS = 1000

/** Payload of the `tables.recompute` job (see RowsService.runRecomputeJob). */
export interface RecomputeJob {
  kind: 'dependents' | 'rows'
  categoryId: number
  rowIds: number[]
  /** Columns the write changed (kind 'dependents'); empty: any column. */
  columns: string[]
  actorId: number
}
const MAX_PROPAGATION_DEPTH = 3
const isTmp = (key: string) => key.startsWith('tmp')
const now = () => formatDateTime(new Date(), true)

const chunks = <T>(items: T[], size = CHUNK) => {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

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

const formulaCache = new Map<string, FormulaNode | null>()
function compiledFormula(source: string): FormulaNode | null {
  if (!formulaCache.has(source)) {
    try {
      formulaCache.set(source, parseFormula(source))
    } catch {
      formulaCache.set(source, null)
    }
  }
  return formulaCache.get(source)!
}

/**
 * Row writes: validation and conversion per field type, computed columns
 * (link captions, lookups, rollups, formulas), side tables of multi-valued
 * fields, and propagation to rows of other tables that link to the written
 * ones. Every write is one stamped transaction; `tables:rows_changed` is
 * emitted after commit. The HTTP operations and the socket (type 13) call
 * these methods.
 */
export class RowsService {
  /** Row table -> the id its next insert is expected to get (see the inserts in `write`). */
  private nextIds = new Map<string, number>()

  /** updateTableValue and the socket's update table value. */
  async updateValue(
    actor: Actor,
    input: {
      rowId: string
      fieldId: number
      value: unknown
      b_o?: unknown
      bypassUrlTrigger?: boolean
      source?: 'api' | 'socket'
    }
  ): Promise<UpdateValueResult> {
    const categoryId = await tableAccess.inferCategory({ fieldId: input.fieldId })
    const fast = await this.updateCell(actor, categoryId, input)
    if (fast) return fast
    return this.write(
      actor,
      [{ key: input.rowId, values: { [String(input.fieldId)]: input.value } }],
      {
        categoryId,
        b_o: input.b_o,
        bypassUrlTrigger: input.bypassUrlTrigger,
        source: input.source,
      }
    )
  }

  /**
   * The hot path of updateTableValue and the socket's type 13: one plain cell
   * of an existing row. Metadata comes from the cache and is revalidated in
   * the write's own statement (the category's meta_version is compared in
   * the UPDATE); the answer carries no row state (neither caller sends one),
   * so without formulas the row is not read at all. Returns null when the
   * write does not qualify (new row, link, multi-valued, user or computed
   * field, or metadata not cached or changed): `write` then does it.
   */
  private async updateCell(
    actor: Actor,
    categoryId: number,
    input: {
      rowId: string
      fieldId: number
      value: unknown
      b_o?: unknown
      bypassUrlTrigger?: boolean
      source?: 'api' | 'socket'
    }
  ): Promise<UpdateValueResult | null> {
    const key = String(input.rowId ?? '').trim()
    if (!/^\d+$/.test(key)) return null
    const rowId = Number(key)
    if (categoryOfRowId(rowId) !== categoryId) return null
    const found = metaService.cached(categoryId)
    if (!found) return null
    const { category } = found
    const field = category.fields.find((candidate) => candidate.id === Number(input.fieldId))
    if (
      !field ||
      !field.column ||
      field.readOnly ||
      COMPUTED_TYPES.has(field.type) ||
      hasSideTable(field) ||
      field.type === 'user'
    )
      return null
    const scope = await tableAccess.forFound(actor, found, 'write', input.b_o)
    const converted = convertInput(field, input.value, ',')
    const written = await new Promise<boolean>((resolve, reject) => {
      this.cellQueue.push({
        actor,
        category,
        field,
        rowId,
        value: converted.value,
        input,
        scope,
        resolve,
        reject,
      })
      if (this.cellDrainers < CELL_DRAINERS) void this.drainCells()
    })
    if (!written) return null // metadata changed: the general path redoes the write
    return {
      categoryId: category.id,
      newRows: [],
      created: 0,
      modified: 1,
      formLastModified: Math.floor(Date.now() / 1000),
    }
  }

  /**
   * Cell writes waiting for a transaction. One-cell writes that arrive while
   * transactions are in flight are applied together in the next one (group
   * commit): one stamp, one BEGIN/COMMIT (one log flush on MariaDB) and one
   * UPDATE per table for the batch, while each write keeps its own checks,
   * answer and event. A write alone waits for nothing. On MariaDB several
   * batches run at once on their own connections (one commits while the next
   * one writes); a row is never in two batches at once, so writes of one row
   * apply in arrival order and batches never wait for each other's row locks.
   */
  private cellQueue: CellWrite[] = []
  private cellDrainers = 0
  /** Row ids of the batches in flight. */
  private cellRowsInFlight = new Set<number>()

  private takeCellBatch(): CellWrite[] {
    const batch: CellWrite[] = []
    const rest: CellWrite[] = []
    for (const job of this.cellQueue) {
      // A full batch, or a row busy in another batch: the write waits (and so do the row's later writes).
      if (batch.length >= CELL_BATCH || this.cellRowsInFlight.has(job.rowId)) rest.push(job)
      else batch.push(job)
    }
    this.cellQueue = rest
    return batch
  }

  private async drainCells() {
    this.cellDrainers++
    try {
      for (let batch = this.takeCellBatch(); batch.length; batch = this.takeCellBatch()) {
        for (const job of batch) this.cellRowsInFlight.add(job.rowId)
        try {
          await this.runCellBatch(batch)
        } finally {
          for (const job of batch) this.cellRowsInFlight.delete(job.rowId)
        }
      }
    } finally {
      this.cellDrainers--
    }
  }

  private async runCellBatch(batch: CellWrite[]) {
    const outcomes = new Map<CellWrite, CellOutcome>()
    try {
      if (this.isOneStatement(batch))
        await stamps.writeStatement(async ({ client, stamp, afterCommit }) => {
          outcomes.clear() // a retried statement starts over
          await this.applyCells(client, stamp, afterCommit, batch, outcomes)
        })
      else
        await stamps.write(async ({ trx, stamp, afterCommit }) => {
          outcomes.clear() // a retried transaction starts over
          await this.applyCells(trx, stamp, afterCommit, batch, outcomes)
        })
    } catch (error) {
      if (batch.length > 1 && !(error instanceof RpcError)) {
        // One write's value was refused by the database (the batch rolled back): each alone.
        for (const job of batch) await this.runCellBatch([job])
        return
      }
      for (const job of batch) job.reject(error)
      return
    }
    for (const job of batch) {
      const outcome = outcomes.get(job)!
      if (outcome === STALE) job.resolve(false)
      else if (outcome === WRITTEN) job.resolve(true)
      else job.reject(outcome.error)
    }
  }

  /**
   * A batch of distinct rows of one table without formulas is written by one
   * UPDATE (applyRound) and needs no transaction around it. With formulas the
   * rows are read before they are written; that pair needs one.
   */
  private isOneStatement(batch: CellWrite[]) {
    const category = batch[0].category
    if (category.fields.some((field) => field.type === 'formula' && field.column)) return false
    const rows = new Set<number>()
    for (const job of batch) {
      if (job.category !== category || rows.has(job.rowId)) return false
      rows.add(job.rowId)
    }
    return true
  }

  /**
   * The writes of a batch (a transaction, or one statement: isOneStatement): per table, one UPDATE of every row
   * written (`CASE id WHEN … THEN …` per column when several rows are), in
   * rounds so that a row written twice gets its writes in arrival order.
   */
  private async applyCells(
    client: QueryClientContract,
    stamp: number,
    afterCommit: (callback: () => unknown) => void,
    batch: CellWrite[],
    outcomes: Map<CellWrite, CellOutcome>
  ) {
    const at = now()
    // Per category metadata object (a newer cached version of a table is a group of its own).
    const groups = new Map<CategoryMeta, CellWrite[]>()
    for (const job of batch) {
      const group = groups.get(job.category)
      if (group) group.push(job)
      else groups.set(job.category, [job])
    }
    for (const [category, jobs] of groups) {
      let pending = jobs
      while (pending.length) {
        const round: CellWrite[] = []
        const later: CellWrite[] = []
        const rows = new Set<number>()
        for (const job of pending) {
          if (rows.has(job.rowId)) later.push(job)
          else {
            rows.add(job.rowId)
            round.push(job)
          }
        }
        await this.applyRound(client, stamp, at, category, round, outcomes)
        pending = later
      }
    }
    // Recompute jobs for rows of other tables that show the written columns, and the events.
    const dependents = new Map<string, { category: CategoryMeta; jobs: CellWrite[] }>()
    for (const job of batch) {
      if (outcomes.get(job) !== WRITTEN) continue
      const key = `${job.category.id}:${job.field.column}:${job.actor.user.id}`
      const entry = dependents.get(key)
      if (entry) entry.jobs.push(job)
      else dependents.set(key, { category: job.category, jobs: [job] })
      const { actor, scope, input } = job
      const event: RowsChanged = {
        bookId: scope.book.id,
        b_o: scope.book.b_o,
        b_c: scope.book.b_c,
        categoryId: job.category.id,
        created: [],
        modified: [job.rowId],
        deleted: [],
        fieldIds: [job.field.id],
        actorId: actor.user.id,
        onBehalfOf: actor.onBehalf ? actor.principal.id : null,
        stamp,
        bypassUrlTrigger: input.bypassUrlTrigger ?? true,
        source: input.source ?? 'api',
      }
      afterCommit(() => emitter.emit('tables:rows_changed', event))
    }
    for (const { category, jobs } of dependents.values())
      await this.scheduleDependents(
        client,
        category,
        [...new Set(jobs.map((job) => job.rowId))],
        new Set([jobs[0].field.column!]),
        jobs[0].actor.user.id,
        afterCommit
      )
  }

  /** One UPDATE for writes of distinct rows of one table; sets each write's outcome. */
  private async applyRound(
    client: QueryClientContract,
    stamp: number,
    at: string,
    category: CategoryMeta,
    round: CellWrite[],
    outcomes: Map<CellWrite, CellOutcome>
  ) {
    const table = quoteId(rowTableName(category.id))
    const mysql = client.dialect.name === 'mysql'
    const marks = (count: number) => Array.from({ length: count }, () => '?').join(', ')
    const notFound = (job: CellWrite) =>
      outcomes.set(job, { error: rpcError('NOT_FOUND', `Row ${job.rowId} not found`) })
    const formulas = category.fields.filter((field) => field.type === 'formula' && field.column)
    let live = round
    const states = new Map<number, Row>()
    if (formulas.length) {
      // Formulas are computed from the whole row: read the rows (and the metadata version) first.
      let rows: Row[]
      try {
        rows = await readQuery(
          `SELECT t.*, (SELECT meta_version FROM table_categories WHERE id = ?) AS quire_mv FROM ${table} t WHERE t.id IN (${marks(round.length)})`,
          [category.id, ...round.map((job) => job.rowId)],
          client
        )
      } catch (error) {
        if (isTransientDbError(error)) throw error
        for (const job of round) outcomes.set(job, STALE) // e.g. the table was dropped by another instance
        return
      }
      if (rows.length && Number(rows[0].quire_mv) !== category.metaVersion) {
        for (const job of round) outcomes.set(job, STALE)
        return
      }
      const byId = new Map(rows.map((row) => [Number(row.id), row]))
      live = []
      for (const job of round) {
        const row = byId.get(job.rowId)
        if (!row) {
          notFound(job)
          continue
        }
        delete row.quire_mv
        const next: Row = {
          ...row,
          [job.field.column!]: job.value,
          updated_at: at,
          updated_by: job.actor.user.code,
          sstamp: stamp,
        }
        this.computeFormulas(category, next)
        states.set(job.rowId, next)
        live.push(job)
      }
      if (!live.length) return
    }

    const sets: string[] = []
    const bindings: unknown[] = []
    const assign = (column: string, jobs: CellWrite[], valueOf: (job: CellWrite) => unknown) => {
      const quoted = quoteId(column)
      const values = jobs.map((job) => normalizeBinding(valueOf(job)))
      if (jobs.length === live.length && values.every((value) => value === values[0])) {
        sets.push(`${quoted} = ?`)
        bindings.push(values[0])
        return
      }
      sets.push(
        `${quoted} = CASE id ${jobs.map(() => 'WHEN ? THEN ?').join(' ')} ELSE ${quoted} END`
      )
      jobs.forEach((job, i) => bindings.push(job.rowId, values[i]))
    }
    const byColumn = new Map<string, CellWrite[]>()
    for (const job of live) {
      const jobs = byColumn.get(job.field.column!)
      if (jobs) jobs.push(job)
      else byColumn.set(job.field.column!, [job])
    }
    for (const [column, jobs] of byColumn) assign(column, jobs, (job) => job.value)
    for (const field of formulas)
      assign(field.column!, live, (job) => states.get(job.rowId)![field.column!])
    assign('updated_by', live, (job) => job.actor.user.code)
    sets.push('updated_at = ?', 'sstamp = ?')
    bindings.push(at, stamp)
    bindings.push(...live.map((job) => job.rowId))
    // Without a row read, the metadata version is checked by the UPDATE itself.
    const guard = formulas.length
      ? ''
      : ' AND (SELECT meta_version FROM table_categories WHERE id = ?) = ?'
    if (!formulas.length) bindings.push(category.id, category.metaVersion)
    let result: any
    try {
      result = await writeQuery(
        client,
        `UPDATE ${table} SET ${sets.join(', ')} WHERE id IN (${marks(live.length)})${guard}`,
        bindings
      )
    } catch (error) {
      if (isTransientDbError(error) || formulas.length) throw error
      // The table may have been dropped by another instance: the general path decides.
      const exists = await writeQuery(
        client,
        'SELECT meta_version FROM table_categories WHERE id = ?',
        [category.id]
      ).then((rows: Row[]) => Number(rows[0]?.meta_version) === category.metaVersion)
      if (exists) throw error
      for (const job of live) outcomes.set(job, STALE)
      return
    }
    const affected = Number(result?.changes ?? result?.affectedRows ?? 0)
    if (affected === live.length) {
      for (const job of live) outcomes.set(job, WRITTEN)
      return
    }
    // Fewer rows written: a missing row (refused alone) or, without formulas, a structure change.
    const present = await writeQuery(
      client,
      `SELECT t.id, (SELECT meta_version FROM table_categories WHERE id = ?) AS quire_mv FROM ${table} t WHERE t.id IN (${marks(live.length)})${mysql ? ' FOR UPDATE' : ''}`,
      [category.id, ...live.map((job) => job.rowId)]
    )
    if (
      !formulas.length &&
      present.length &&
      Number(present[0].quire_mv) !== category.metaVersion
    ) {
      for (const job of live) outcomes.set(job, STALE) // the guard wrote nothing
      return
    }
    const ids = new Set(present.map((row: Row) => Number(row.id)))
    for (const job of live) {
      if (ids.has(job.rowId)) outcomes.set(job, WRITTEN)
      else notFound(job)
    }
  }

  async write(actor: Actor, writes: RowWrite[], options: WriteOptions): Promise<WriteResult> {
    const separator = options.linkSeparator || ','
    let categoryId = options.categoryId
    if (!categoryId) {
      for (const write of writes) {
        const fieldId = Object.keys(write.values)[0]
        if (fieldId) {
          categoryId = await tableAccess.inferCategory({ fieldId })
          break
        }
        if (!isTmp(write.key)) {
          categoryId = await tableAccess.inferCategory({ rowId: write.key })
          break
        }
      }
    }
    if (!categoryId)
      throw rpcError(
        'MISSING_PARAMETER',
        'Missing parameter: catId (or fieldValues naming a field)'
      )
    const scope = await tableAccess.forCategory(actor, categoryId, 'write', options.b_o)
    const { category } = scope

    // Validate and convert everything before touching the database: a bad value writes nothing.
    const fieldsById = new Map(category.fields.map((field) => [String(field.id), field]))
    const prepared: {
      key: string
      id: number | null
      columns: Row
      lists: Map<FieldDef, (string | number)[]>
    }[] = []
    const seenTmp = new Map<string, number>()
    for (const write of writes) {
      const key = String(write.key ?? '').trim()
      let id: number | null = null
      if (!isTmp(key)) {
        if (!/^\d+$/.test(key))
          throw rpcError(
            'INVALID_PARAMETER',
            `Invalid row id "${key}" (a server id, or a temporary id starting with tmp)`
          )
        id = Number(key)
        if (categoryOfRowId(id) !== category.id)
          throw rpcError('NOT_FOUND', `Row ${key} is not a row of table ${category.id}`)
      }
      const columns: Row = {}
      const lists = new Map<FieldDef, (string | number)[]>()
      for (const [fieldId, raw] of Object.entries(write.values)) {
        const field = fieldsById.get(String(fieldId).trim())
        if (!field)
          throw rpcError(
            'INVALID_PARAMETER',
            `Field ${fieldId} is not a field of table "${category.name}"`
          )
        if (COMPUTED_TYPES.has(field.type)) continue // computed by the server
        if (field.readOnly) throw rpcError('FORBIDDEN', `Field "${field.name}" is read-only`)
        const converted = convertInput(field, raw, separator)
        columns[field.column!] = converted.value
        if (hasSideTable(field)) lists.set(field, converted.list ?? [])
      }
      // A tmp id used twice in one request names the same new row.
      if (id === null && seenTmp.has(key)) {
        const previous = prepared[seenTmp.get(key)!]
        Object.assign(previous.columns, columns)
        for (const [field, list] of lists) previous.lists.set(field, list)
        continue
      }
      if (id === null) seenTmp.set(key, prepared.length)
      prepared.push({ key, id, columns, lists })
    }
    await this.checkLinks(
      category,
      prepared.flatMap((row) => [...row.lists.entries()])
    )
    await this.checkUsers(category, prepared)

    const result = await stamps.write(async ({ trx, stamp, afterCommit }) => {
      const at = now()
      const by = actor.user.code
      const table = rowTableName(category.id)

      // Existing rows: load, merge.
      const existingIds = prepared.filter((row) => row.id !== null).map((row) => row.id!)
      const current = new Map<number, Row>()
      for (const part of chunks([...new Set(existingIds)])) {
        const rows = await trx.from(table).whereIn('id', part)
        for (const row of rows) current.set(Number(row.id), row)
      }
      for (const id of existingIds)
        if (!current.has(id)) throw rpcError('NOT_FOUND', `Row ${id} not found`)

      const states: { prepared: (typeof prepared)[number]; state: Row; isNew: boolean }[] =
        prepared.map((row) => {
          const base =
            row.id !== null
              ? { ...current.get(row.id)! }
              : { ord: 0, created_at: at, created_by: by }
          return {
            prepared: row,
            state: { ...base, ...row.columns, updated_at: at, updated_by: by, sstamp: stamp },
            isNew: row.id === null,
          }
        })
      await this.assignAutoincrements(
        trx,
        category,
        states.filter((entry) => entry.isNew).map((entry) => entry.state)
      )
      // Link captions, lookups and rollups of existing rows change only when their links do (or through propagate).
      const linkColumns = new Set(
        category.fields.filter((field) => field.type === 'link').map((field) => field.column)
      )
      const linksChanged = states.some(
        (entry) =>
          entry.isNew ||
          Object.keys(entry.prepared.columns).some((column) => linkColumns.has(column))
      )
      await this.computeRows(
        trx,
        category,
        states.map((entry) => entry.state),
        linksChanged
      )

      // Inserts, in batches; ids come back consecutive from the table's sequence. New rows get
      // ord = id: they are inserted with the ids this process expects next (the table's last
      // insert + 1), and only when the ids turn out otherwise (first insert since start, another
      // instance or transaction inserted meanwhile) an UPDATE sets ord. Rewriting ord of every
      // new row cost a second write per row, and on MariaDB left delete-marked (0, id) entries
      // at the head of the (ord, id) index that first-page reads skipped until purge.
      const inserted = states.filter((entry) => entry.isNew)
      for (const part of chunks(inserted)) {
        const guess = this.nextIds.get(table)
        part.forEach((entry, index) => {
          entry.state.ord = guess === undefined ? 0 : guess + index
        })
        const payload = part.map((entry) => this.columnsOf(category, entry.state))
        const ids = await this.insertBatch(trx, table, payload)
        part.forEach((entry, index) => {
          entry.state.id = ids[index]
          entry.state.ord = ids[index]
        })
        if (guess === undefined || ids.some((id, index) => id !== guess + index))
          await trxQuery(trx, `UPDATE ${quoteId(table)} SET ord = id WHERE id >= ? AND id <= ?`, [
            ids[0],
            ids[ids.length - 1],
          ])
        this.nextIds.set(table, ids[ids.length - 1] + 1)
      }
      // Updates: one statement per row, only the columns that can change.
      for (const entry of states.filter((candidate) => !candidate.isNew)) {
        const columns = this.columnsOf(category, entry.state)
        await trx.from(table).where('id', entry.state.id).update(columns)
      }
      // Side tables of multi-valued fields.
      await this.writeSideTables(
        trx,
        category,
        states.map((entry) => ({
          id: Number(entry.state.id),
          lists: entry.prepared.lists,
          isNew: entry.isNew,
        }))
      )

      const touched = states.map((entry) => Number(entry.state.id))
      const changedFields = new Set(prepared.flatMap((row) => Object.keys(row.columns)))
      await this.scheduleDependents(
        trx,
        category,
        touched.filter((_, index) => !states[index].isNew),
        changedFields,
        actor.user.id,
        afterCommit
      )

      const event: RowsChanged = {
        bookId: scope.book.id,
        b_o: scope.book.b_o,
        b_c: scope.book.b_c,
        categoryId: category.id,
        created: inserted.map((entry) => Number(entry.state.id)),
        modified: states.filter((entry) => !entry.isNew).map((entry) => Number(entry.state.id)),
        deleted: [],
        fieldIds: [...new Set(writes.flatMap((write) => Object.keys(write.values)))].map(Number),
        actorId: actor.user.id,
        onBehalfOf: actor.onBehalf ? actor.principal.id : null,
        stamp,
        bypassUrlTrigger: options.bypassUrlTrigger ?? true,
        source: options.source ?? 'api',
      }
      afterCommit(() => emitter.emit('tables:rows_changed', event))
      return { states, inserted }
    })

    const fieldsOut = (state: Row) => {
      const fields: WriteResult['rows'][number]['fields'] = {}
      for (const field of category.fields) fields[String(field.id)] = serializeCell(field, state)
      return fields
    }
    return {
      categoryId: category.id,
      newRows: result.inserted.map((entry) => ({
        id: Number(entry.state.id),
        tmpId: entry.prepared.key,
        info: { order: Number(entry.state.ord) },
      })),
      // Serialized on demand: only createOrUpdateTableRow answers them (10,000 rows cost ~100 ms).
      get rows() {
        return result.states.map((entry) => ({
          id: Number(entry.state.id),
          fields: fieldsOut(entry.state),
        }))
      },
      created: result.inserted.length,
      modified: result.states.length - result.inserted.length,
      formLastModified: Math.floor(Date.now() / 1000),
    }
  }

  /** Writes many rows: the prepared rows also carry `values` for the event. */
  private columnsOf(category: CategoryMeta, state: Row): Row {
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

  /**
   * Multi-row insert with one `VALUES (...), (...)` statement per slice (knex
   * would compile SQLite multi-inserts to UNION ALL SELECTs, capped at 500 rows
   * and slow). Returns the new ids: the sequence is consecutive within a statement.
   */
  async insertBatch(trx: TransactionClientContract, table: string, rows: Row[]): Promise<number[]> {
    if (rows.length === 0) return []
    const mysql = trx.dialect.name === 'mysql'
    const columns = Object.keys(rows[0])
    const perStatement = Math.max(1, Math.floor(30_000 / columns.length))
    const ids: number[] = []
    for (let start = 0; start < rows.length; start += perStatement) {
      const slice = rows.slice(start, start + perStatement)
      const result = await trxQuery(
        trx,
        insertSql(table, columns, slice.length),
        bindingsOf(slice, columns)
      )
      // better-sqlite3 answers the last id of the statement, mysql2 the first.
      const first = mysql
        ? Number(result.insertId)
        : Number(result.lastInsertRowid) - slice.length + 1
      slice.forEach((_, index) => ids.push(first + index))
    }
    return ids
  }

  /** Multi-row insert of rows without an id sequence (side tables). */
  async insertPlain(trx: TransactionClientContract, table: string, rows: Row[]) {
    if (rows.length === 0) return
    const columns = Object.keys(rows[0])
    const perStatement = Math.max(1, Math.floor(30_000 / columns.length))
    for (let start = 0; start < rows.length; start += perStatement) {
      const slice = rows.slice(start, start + perStatement)
      await trxQuery(trx, insertSql(table, columns, slice.length), bindingsOf(slice, columns))
    }
  }

  private async assignAutoincrements(
    trx: TransactionClientContract,
    category: CategoryMeta,
    states: Row[]
  ) {
    if (states.length === 0) return
    for (const field of category.fields) {
      if (field.type !== 'autoincrement' || !field.column) continue
      const row = await trx.from(rowTableName(category.id)).max(`${field.column} as top`).first()
      let next = Number(row?.top ?? 0) + 1
      for (const state of states) state[field.column] = next++
    }
  }

  private async checkLinks(category: CategoryMeta, entries: [FieldDef, (string | number)[]][]) {
    const byField = new Map<FieldDef, Set<number>>()
    for (const [field, list] of entries) {
      if (field.type !== 'link') continue
      const set = byField.get(field) ?? new Set<number>()
      for (const id of list) set.add(Number(id))
      byField.set(field, set)
    }
    for (const [field, ids] of byField) {
      if (ids.size === 0) continue
      const target = field.options.linkCatId
      if (!target) throw rpcError('INVALID_PARAMETER', `Field "${field.name}" links to no table`)
      const found = new Set<number>()
      for (const part of chunks([...ids], 1000)) {
        const rows = await db.from(rowTableName(target)).whereIn('id', part).select('id')
        for (const row of rows) found.add(Number(row.id))
      }
      const missing = [...ids].filter((id) => !found.has(id))
      if (missing.length) {
        throw rpcError(
          'INVALID_PARAMETER',
          `Invalid value for field "${field.name}" (${field.id}): row ${missing[0]} does not exist in the linked table`,
          {
            field: field.name,
            fieldId: field.id,
          }
        )
      }
    }
    void category
  }

  private async checkUsers(category: CategoryMeta, prepared: { columns: Row }[]) {
    for (const field of category.fields) {
      if (field.type !== 'user' || !field.column) continue
      const codes = new Set(
        prepared
          .map((row) => row.columns[field.column!])
          .filter((code) => typeof code === 'string' && code !== '')
      )
      if (codes.size === 0) continue
      const rows = await db
        .from('users')
        .whereIn('code', [...codes])
        .select('code')
      const known = new Set(rows.map((row) => row.code))
      const unknown = [...codes].find((code) => !known.has(code))
      if (unknown) {
        throw rpcError(
          'INVALID_PARAMETER',
          `Invalid value for field "${field.name}" (${field.id}): no user "${unknown}"`,
          { field: field.name, fieldId: field.id }
        )
      }
    }
  }

  private async writeSideTables(
    trx: TransactionClientContract,
    category: CategoryMeta,
    rows: { id: number; lists: Map<FieldDef, (string | number)[]>; isNew?: boolean }[]
  ) {
    const byField = new Map<FieldDef, { id: number; list: (string | number)[]; isNew: boolean }[]>()
    for (const row of rows) {
      for (const [field, list] of row.lists) {
        const entries = byField.get(field) ?? []
        entries.push({ id: row.id, list, isNew: Boolean(row.isNew) })
        byField.set(field, entries)
      }
    }
    for (const [field, entries] of byField) {
      const side = sideTableName(category.id, field.id)
      for (const part of chunks(entries)) {
        // New rows have no entries yet.
        const existing = part.filter((entry) => !entry.isNew).map((entry) => entry.id)
        if (existing.length)
          await trxQuery(
            trx,
            `DELETE FROM ${quoteId(side)} WHERE row_id IN (${existing.map(() => '?').join(', ')})`,
            existing
          )
        const inserts = part.flatMap((entry) =>
          entry.list.map((value, pos) => ({ row_id: entry.id, value, pos }))
        )
        await this.insertPlain(trx, side, inserts)
      }
    }
  }

  /**
   * Fills computed columns of rows held in memory: link captions, lookups,
   * rollups (one query per link field for all rows), autoincrement and formulas.
   */
  async computeRows(
    trx: TransactionClientContract,
    category: CategoryMeta,
    states: Row[],
    linksChanged = true
  ) {
    const links = linksChanged
      ? category.fields.filter((field) => field.type === 'link' && field.column)
      : []
    const targets = new Map<number, { meta: CategoryMeta; rows: Map<number, Row> }>()
    for (const link of links) {
      const targetId = link.options.linkCatId
      if (!targetId) continue
      const found = targetId === category.id ? null : await metaService.category(targetId, trx)
      const meta = targetId === category.id ? category : found?.category
      if (!meta) continue
      const ids = new Set<number>()
      for (const state of states) for (const id of parseIds(state[link.column!])) ids.add(id)
      const entry = targets.get(link.id) ?? { meta, rows: new Map<number, Row>() }
      for (const part of chunks([...ids], 1000)) {
        const rows = await trx.from(rowTableName(meta.id)).whereIn('id', part)
        for (const row of rows) entry.rows.set(Number(row.id), row)
      }
      targets.set(link.id, entry)
    }
    for (const state of states) {
      for (const link of links) {
        const target = targets.get(link.id)
        const ids = parseIds(state[link.column!])
        const primary = target ? primaryField(target.meta) : undefined
        state[linkTextColumn(link.column!)] = ids.length
          ? ids
              .map((id) => {
                const row = target?.rows.get(id)
                return row && primary ? displayText(primary, row) : String(id)
              })
              .join(', ')
          : null
      }
      for (const field of linksChanged ? category.fields : []) {
        if ((field.type !== 'lookup' && field.type !== 'rollup') || !field.column) continue
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
      this.computeFormulas(category, state)
    }
  }

  private computeFormulas(category: CategoryMeta, state: Row) {
    for (const field of category.fields) {
      if (field.type !== 'formula' || !field.column) continue
      const tree = compiledFormula(field.options.formula ?? '')
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

  /**
   * Rows elsewhere that show data of the changed rows (link captions, lookups,
   * rollups) are recomputed in the same transaction. Recomputation follows
   * links up to MAX_PROPAGATION_DEPTH tables deep (cycles stop there).
   */
  async propagate(
    trx: TransactionClientContract,
    category: CategoryMeta,
    rowIds: number[],
    changedColumns: Set<string> | null,
    stamp: number,
    depth: number,
    changes?: Map<number, Set<number>>
  ) {
    if (rowIds.length === 0 || depth >= MAX_PROPAGATION_DEPTH) return
    const dependents = await this.dependents(category, trx)
    for (const { source, link } of dependents) {
      const watched = this.watchedColumns(source, link, category)
      if (changedColumns && ![...changedColumns].some((column) => watched.has(column))) continue
      const side = sideTableName(source.id, link.id)
      const sourceIds = new Set<number>()
      for (const part of chunks(rowIds, 1000)) {
        const rows = await trx.from(side).whereIn('value', part).select('row_id')
        for (const row of rows) sourceIds.add(Number(row.row_id))
      }
      await this.recompute(trx, source, [...sourceIds], stamp, depth + 1, changes)
    }
  }

  /** Recomputes stored rows (link id lists re-read from side tables) and propagates further. */
  async recompute(
    trx: TransactionClientContract,
    category: CategoryMeta,
    rowIds: number[],
    stamp: number,
    depth = 0,
    changes?: Map<number, Set<number>>
  ) {
    const table = rowTableName(category.id)
    const links = category.fields.filter((field) => field.type === 'link' && field.column)
    for (const part of chunks(rowIds)) {
      // Locked (MariaDB): a recompute running beside a user's write must not undo it.
      const query = trx.from(table).whereIn('id', part)
      if (trx.dialect.name === 'mysql') query.forUpdate()
      const rows = await query
      for (const link of links) {
        const sideRows = await trx
          .from(sideTableName(category.id, link.id))
          .whereIn('row_id', part)
          .orderBy('pos')
        const byRow = new Map<number, number[]>()
        for (const sideRow of sideRows) {
          const list = byRow.get(Number(sideRow.row_id)) ?? []
          list.push(Number(sideRow.value))
          byRow.set(Number(sideRow.row_id), list)
        }
        for (const row of rows) {
          const list = byRow.get(Number(row.id)) ?? []
          row[link.column!] = list.length ? JSON.stringify(list) : null
        }
      }
      const before = rows.map((row) => JSON.stringify(this.columnsOf(category, row)))
      await this.computeRows(trx, category, rows)
      const changed: number[] = []
      for (const [index, row] of rows.entries()) {
        if (JSON.stringify(this.columnsOf(category, row)) === before[index]) continue
        row.sstamp = stamp
        changed.push(Number(row.id))
        await trx.from(table).where('id', row.id).update(this.columnsOf(category, row))
      }
      if (changes && changed.length) {
        const set = changes.get(category.id) ?? new Set<number>()
        for (const id of changed) set.add(id)
        changes.set(category.id, set)
      }
      await this.propagate(trx, category, changed, null, stamp, depth, changes)
    }
  }

  /**
   * After a write: when rows of other tables show data of the written rows
   * (link captions, lookups, rollups through a link to them), a
   * `tables.recompute` job recomputes them once the write has committed. The
   * written rows themselves were computed in the write; this only decides
   * from metadata (no row query) whether a job is needed.
   */
  async scheduleDependents(
    client: QueryClientContract,
    category: CategoryMeta,
    rowIds: number[],
    changedColumns: Set<string>,
    actorId: number,
    afterCommit: (callback: () => unknown) => void
  ) {
    if (rowIds.length === 0) return
    const dependents = await this.dependents(category, client)
    const watched = dependents.some(({ source, link }) => {
      const columns = this.watchedColumns(source, link, category)
      return [...changedColumns].some((column) => columns.has(column))
    })
    if (!watched) return
    const columns = [...changedColumns]
    afterCommit(() => this.dispatchRecompute('dependents', category.id, rowIds, actorId, columns))
  }

  private async dispatchRecompute(
    kind: RecomputeJob['kind'],
    categoryId: number,
    rowIds: number[],
    actorId: number,
    columns: string[] = []
  ) {
    for (const part of chunks(rowIds, RECOMPUTE_JOB_ROWS)) {
      const payload: RecomputeJob = { kind, categoryId, rowIds: part, columns, actorId }
      await queue.dispatch('tables.recompute', payload)
    }
  }

  /**
   * The `tables.recompute` job: recomputes the rows of other tables that show
   * data of `rowIds` (kind 'dependents'), or the rows `rowIds` themselves
   * (kind 'rows': their links were cut by a delete), following links up to
   * MAX_PROPAGATION_DEPTH tables deep, in one stamped transaction. Idempotent
   * (it recomputes from the current data), so a retry is harmless. Rows whose
   * values changed are announced by `tables:rows_changed` (bypassUrlTrigger:
   * computed values trigger no webhooks).
   */
  async runRecomputeJob(job: RecomputeJob) {
    const found = await metaService.category(Number(job.categoryId))
    if (!found) return // table deleted since
    const rowIds = (job.rowIds ?? []).map(Number).filter(Number.isSafeInteger)
    const changes = new Map<number, Set<number>>()
    const stamp = await stamps.write(async ({ trx, stamp: writeStamp, afterCommit }) => {
      if (job.kind === 'rows')
        await this.recompute(trx, found.category, rowIds, writeStamp, 1, changes)
      else
        await this.propagate(
          trx,
          found.category,
          rowIds,
          job.columns?.length ? new Set(job.columns) : null,
          writeStamp,
          0,
          changes
        )
      afterCommit(() => this.announce(changes, writeStamp, Number(job.actorId)))
      return writeStamp
    })
    return { stamp, changed: [...changes.values()].reduce((total, set) => total + set.size, 0) }
  }

  private async announce(changes: Map<number, Set<number>>, stamp: number, actorId: number) {
    for (const [categoryId, ids] of changes) {
      const found = await metaService.category(categoryId)
      if (!found) continue
      const book = await tableAccess.book(found.form.bookId)
      const event: RowsChanged = {
        bookId: book.id,
        b_o: book.b_o,
        b_c: book.b_c,
        categoryId,
        created: [],
        modified: [...ids],
        deleted: [],
        fieldIds: [],
        actorId,
        onBehalfOf: null,
        stamp,
        bypassUrlTrigger: true,
        source: 'api',
      }
      await emitter.emit('tables:rows_changed', event)
    }
  }

  /** Recomputes every row of a table (after a computed field is added or changed). */
  async recomputeAll(categoryId: number) {
    const found = await metaService.category(categoryId)
    if (
      !found ||
      !found.category.fields.some((field) =>
        ['link', 'lookup', 'rollup', 'formula'].includes(field.type)
      )
    )
      return
    let after = 0
    for (;;) {
      const page = await db
        .from(rowTableName(categoryId))
        .where('id', '>', after)
        .orderBy('id')
        .limit(2000)
        .select('id')
      const ids = page.map((row) => Number(row.id))
      if (ids.length === 0) return
      await stamps.write(({ trx, stamp }) => this.recompute(trx, found.category, ids, stamp, 0))
      after = ids[ids.length - 1]
    }
  }

  /** Link fields (in this form) that point at `category`. */
  private async dependents(
    category: CategoryMeta,
    client: QueryClientContract
  ): Promise<{ source: CategoryMeta; link: FieldDef }[]> {
    const out: { source: CategoryMeta; link: FieldDef }[] = []
    for (const row of await metaService.formLinks(category.formId, client)) {
      if (row.target !== category.id) continue
      const found =
        row.categoryId === category.id ? null : await metaService.category(row.categoryId, client)
      const source = row.categoryId === category.id ? category : found?.category
      const link = source?.fields.find((field) => field.id === row.id)
      if (source && link) out.push({ source, link })
    }
    return out
  }

  /** Columns of the target table that a link (its caption, lookups and rollups through it) shows. */
  private watchedColumns(source: CategoryMeta, link: FieldDef, target: CategoryMeta) {
    const watched = new Set<string>()
    const primary = primaryField(target)
    if (primary) watched.add(sqlColumnOf(primary)!)
    for (const field of source.fields) {
      if (
        (field.type === 'lookup' || field.type === 'rollup') &&
        field.options.linkFieldId === link.id
      ) {
        const targetField = target.fields.find(
          (candidate) => candidate.id === field.options.targetFieldId
        )
        const column = targetField ? sqlColumnOf(targetField) : null
        if (column) watched.add(column)
      }
    }
    return watched
  }

  /** deleteTableRow(s): removes rows and their side-table entries; links pointing at them are cut. */
  async deleteRows(
    actor: Actor,
    rowIds: number[],
    options: { b_o?: unknown; bypassUrlTrigger?: boolean; source?: 'api' | 'socket' } = {}
  ) {
    const byCategory = new Map<number, number[]>()
    for (const id of rowIds) {
      const categoryId = categoryOfRowId(id)
      byCategory.set(categoryId, [...(byCategory.get(categoryId) ?? []), id])
    }
    const scopes: { scope: TableScope; ids: number[] }[] = []
    for (const [categoryId, ids] of byCategory) {
      scopes.push({
        scope: await tableAccess.forCategory(actor, categoryId, 'delete', options.b_o),
        ids,
      })
    }
    let deleted = 0
    await stamps.write(async ({ trx, stamp, afterCommit }) => {
      for (const { scope, ids } of scopes) {
        const { category } = scope
        const existing: number[] = []
        for (const part of chunks(ids)) {
          const rows = await trx.from(rowTableName(category.id)).whereIn('id', part).select('id')
          existing.push(...rows.map((row) => Number(row.id)))
        }
        if (existing.length === 0) continue
        for (const part of chunks(existing)) {
          for (const field of category.fields) {
            if (hasSideTable(field))
              await trx.from(sideTableName(category.id, field.id)).whereIn('row_id', part).delete()
          }
          await trx.from(rowTableName(category.id)).whereIn('id', part).delete()
          if (category.fields.some((field) => field.type === 'comments'))
            await commentsService.deleteForRows(trx, category.id, part)
        }
        deleted += existing.length
        // Cut links that pointed at the deleted rows now; those rows are recomputed by a job.
        for (const { source, link } of await this.dependents(category, trx)) {
          const side = sideTableName(source.id, link.id)
          const sourceIds = new Set<number>()
          for (const part of chunks(existing, 1000)) {
            const rows = await trx.from(side).whereIn('value', part).select('row_id')
            for (const row of rows) sourceIds.add(Number(row.row_id))
            await trx.from(side).whereIn('value', part).delete()
          }
          if (sourceIds.size)
            afterCommit(() =>
              this.dispatchRecompute('rows', source.id, [...sourceIds], actor.user.id)
            )
        }
        const event: RowsChanged = {
          bookId: scope.book.id,
          b_o: scope.book.b_o,
          b_c: scope.book.b_c,
          categoryId: category.id,
          created: [],
          modified: [],
          deleted: existing,
          fieldIds: [],
          actorId: actor.user.id,
          onBehalfOf: actor.onBehalf ? actor.principal.id : null,
          stamp,
          bypassUrlTrigger: options.bypassUrlTrigger ?? true,
          source: options.source ?? 'api',
        }
        afterCommit(() => emitter.emit('tables:rows_changed', event))
      }
    })
    return { deleted, formLastModified: Math.floor(Date.now() / 1000) }
  }
}

/** `INSERT INTO table (columns) VALUES (?, ...), ...` for `count` rows. */
function insertSql(table: string, columns: string[], count: number) {
  const tuple = `(${columns.map(() => '?').join(', ')})`
  return `INSERT INTO ${quoteId(table)} (${columns.map(quoteId).join(', ')}) VALUES ${Array.from({ length: count }, () => tuple).join(', ')}`
}

function bindingsOf(rows: Row[], columns: string[]) {
  const out: unknown[] = []
  for (const row of rows) for (const column of columns) out.push(normalizeBinding(row[column]))
  return out
}

/** A one-cell write waiting for its batch transaction (RowsService.updateCell). */
interface CellWrite {
  actor: Actor
  category: CategoryMeta
  field: FieldDef
  rowId: number
  value: unknown
  input: { bypassUrlTrigger?: boolean; source?: 'api' | 'socket' }
  scope: TableScope
  /** true: written; false: the cached metadata was out of date (nothing written). */
  resolve: (written: boolean) => void
  reject: (error: unknown) => void
}

const WRITTEN = 'written' as const
/** The cached metadata of a fast-path write is out of date: the general path redoes the write. */
const STALE = 'stale' as const
type CellOutcome = typeof WRITTEN | typeof STALE | { error: unknown }

/** better-sqlite3 binds no booleans; MySQL takes 1/0 as well. */
const normalizeBinding = (value: unknown) =>
  typeof value === 'boolean' ? (value ? 1 : 0) : value === undefined ? null : value

function parseIds(value: unknown): number[] {
  if (value === null || value === undefined || value === '') return []
  try {
    const parsed = typeof value === 'string' ? JSON.parse(value) : value
    return Array.isArray(parsed) ? parsed.map(Number).filter(Number.isFinite) : []
  } catch {
    return []
  }
}

function rollup(fn: string, rows: Row[], field: FieldDef | undefined): number | null {
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

export const rowsService = new RowsService()
