import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { RpcError, rpcError } from '#core/rpc/errors'
import { quoteId, readQuery, writeQuery } from '#core/native_sql'
import { isTransientDbError } from '#core/services/db_errors'
import { GroupCommit, type Settled } from '#core/services/group_commit'
import { StampService } from '#core/services/stamp_service'
import { OutboxService } from '#core/outbox/outbox_service'
import {
  COMPUTED_TYPES,
  convertInput,
  hasSideTable,
  rowTableName,
  type FieldDef,
} from '../lib/field_types.js'
import { normalizeBinding, nowText, type Row } from '../lib/row_sql.js'
import type { RowFieldChange, RowsChanged, RowsChanging } from '../events.js'
import { ComputedFields } from './computed_fields.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import { RecomputeService } from './recompute_service.js'
import { changeOf, fieldChanges } from './row_changes.js'
import { HistoryService, operationOf, type HistoryEntry } from './history_service.js'
import { categoryOfRowId } from './schema_service.js'
import { TableAccess, type TableScope } from './table_access.js'

/** One-cell writes per group-commit batch. */
const CELL_BATCH = 64
/**
 * Batches in flight at once: one on both databases (plugins/tables/README.md,
 * "Figures behind the settings", gives the measurements). GroupCommit keeps a larger
 * value correct: a row is never in two batches at once.
 */
const CELL_CONCURRENCY = 1

/** A one-cell write: what updateTableValue and the socket's type 13 send. */
export interface CellInput {
  rowId: string
  fieldId: number
  value: unknown
  b_o?: unknown
  bypassUrlTrigger?: boolean
  source?: 'api' | 'socket'
  /** The operation recorded in the cell's history (default: from source). */
  operation?: string
}

/** A one-cell write waiting for its batch (CellWriter.write). */
interface CellWrite {
  actor: Actor
  category: CategoryMeta
  field: FieldDef
  rowId: number
  value: unknown
  input: { bypassUrlTrigger?: boolean; source?: 'api' | 'socket'; operation?: string }
  scope: TableScope
  /** The outbox wants this write (a webhook): its old value is read and its change staged. */
  staged: boolean
}

/** A written cell's old and new value for the outbox, and the round of the batch that wrote it. */
interface StagedChange {
  change: RowFieldChange
  round: number
}

/** A history entry of a cell write, kept until the write's outcome is known. */
type CellHistoryEntry = HistoryEntry & { job: CellWrite }

const WRITTEN = 'written' as const
/** The cached metadata of a write is out of date: the general path (RowWriter) redoes it. */
const STALE = 'stale' as const
type CellOutcome = typeof WRITTEN | typeof STALE | { error: unknown }

/**
 * The hot path of updateTableValue and the socket's type 13: one plain cell
 * of an existing row, group-committed. One-cell writes that arrive while a
 * batch is being written go together in the next one: one stamp, one
 * BEGIN/COMMIT (one log flush on MariaDB) and one UPDATE per table for the
 * batch, while each write keeps its own checks, answer and event. A write
 * alone waits for nothing. Writes of one row apply in arrival order.
 */
@inject()
export class CellWriter {
  private queue: GroupCommit<CellWrite, boolean>

  constructor(
    private stamps: StampService,
    private meta: MetaService,
    private access: TableAccess,
    private computed: ComputedFields,
    private recompute: RecomputeService,
    private outbox: OutboxService,
    private history: HistoryService
  ) {
    this.queue = new GroupCommit<CellWrite, boolean>({
      batchSize: CELL_BATCH,
      concurrency: CELL_CONCURRENCY,
      keyOf: (job) => job.rowId,
      commit: (batch) => this.commit(batch),
      // A value the database refused rolls the batch back: each write alone. A nok is final.
      retryAlone: (error) => !(error instanceof RpcError),
      // On SQLite a batch never waits for I/O: without gathering, each request's write was a batch.
      gather: true,
    })
  }

  /**
   * Writes one cell. Metadata comes from the cache and is revalidated in the
   * write's own statement (the category's meta_version is compared in the
   * UPDATE); the answer carries no row state (neither caller sends one), so
   * without formulas the row is not read at all. Returns false when the write
   * does not qualify (new row, link, multi-valued, user or computed field,
   * or metadata not cached or changed): the caller then uses RowWriter.
   */
  async write(actor: Actor, categoryId: number, input: CellInput): Promise<boolean> {
    const key = String(input.rowId ?? '').trim()
    if (!/^\d+$/.test(key)) return false
    const rowId = Number(key)
    if (categoryOfRowId(rowId) !== categoryId) return false
    const found = this.meta.cached(categoryId)
    if (!found) return false
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
      return false
    const scope = await this.access.forFound(actor, found, 'write', input.b_o)
    // A write the outbox wants (a webhook) reads its old value in the batch's transaction.
    const staged = this.outbox.wants('tables:rows_changed', changeOf(scope, actor, input))
    const converted = convertInput(field, input.value, ',')
    // false: the metadata changed, nothing was written.
    return this.queue.submit({
      actor,
      category,
      field,
      rowId,
      value: converted.value,
      input,
      scope,
      staged,
    })
  }

  /** Commits a batch: true for a written cell, false for a stale one (see STALE). */
  private async commit(batch: CellWrite[]): Promise<Settled<boolean>[]> {
    const outcomes = new Map<CellWrite, CellOutcome>()
    if (this.isOneStatement(batch))
      await this.stamps.writeStatement(async ({ client, stamp, afterCommit }) => {
        outcomes.clear() // a retried statement starts over
        await this.applyCells(client, stamp, afterCommit, batch, outcomes)
      })
    else
      // Native statements only (readQuery, writeQuery, HistoryService.record): no knex transaction.
      await this.stamps.writeNative(async ({ trx, stamp, afterCommit }) => {
        outcomes.clear() // a retried transaction starts over
        await this.applyCells(trx, stamp, afterCommit, batch, outcomes)
      })
    return batch.map((job) => {
      const outcome = outcomes.get(job)!
      if (outcome === WRITTEN) return { ok: true, value: true }
      if (outcome === STALE) return { ok: true, value: false }
      return { ok: false, error: outcome.error }
    })
  }

  /**
   * A batch of distinct rows of one table without formulas is written by one
   * UPDATE (applyRound) and needs no transaction around it. With formulas the
   * rows are read before they are written; that pair needs one.
   */
  private isOneStatement(batch: CellWrite[]) {
    const category = batch[0].category
    // History and the outbox record old values: the rows are read first, in the write's transaction.
    if (this.history.enabled() || this.computed.hasFormulas(category)) return false
    if (batch.some((job) => job.staged)) return false
    const rows = new Set<number>()
    for (const job of batch) {
      if (job.category !== category || rows.has(job.rowId)) return false
      rows.add(job.rowId)
    }
    return true
  }

  /**
   * The writes of a batch (a transaction, or one statement: isOneStatement):
   * per table, one UPDATE of every row written (`CASE id WHEN … THEN …` per
   * column when several rows are), in rounds so that a row written twice gets
   * its writes in arrival order.
   */
  private async applyCells(
    client: QueryClientContract,
    stamp: number,
    afterCommit: (callback: () => unknown) => void,
    batch: CellWrite[],
    outcomes: Map<CellWrite, CellOutcome>
  ) {
    const at = nowText()
    const entries: HistoryEntry[] = []
    const changes = new Map<CellWrite, StagedChange>()
    // Per category metadata object (a newer cached version of a table is a group of its own).
    const groups = new Map<CategoryMeta, CellWrite[]>()
    for (const job of batch) {
      const group = groups.get(job.category)
      if (group) group.push(job)
      else groups.set(job.category, [job])
    }
    for (const [category, jobs] of groups) {
      let pending = jobs
      for (let round = 0; pending.length; round++) {
        const jobsOfRound: CellWrite[] = []
        const later: CellWrite[] = []
        const rows = new Set<number>()
        for (const job of pending) {
          if (rows.has(job.rowId)) later.push(job)
          else {
            rows.add(job.rowId)
            jobsOfRound.push(job)
          }
        }
        await this.applyRound(
          client,
          stamp,
          at,
          category,
          jobsOfRound,
          outcomes,
          entries,
          (job, change) => changes.set(job, { change, round })
        )
        pending = later
      }
    }
    // A stale or refused write records nothing.
    await this.history.record(
      client,
      entries.filter((entry) => outcomes.get((entry as CellHistoryEntry).job) === WRITTEN)
    )
    await this.stageChanges(client, stamp, afterCommit, batch, outcomes, changes)
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
        ...changeOf(scope, actor, input),
        modified: [job.rowId],
        fieldIds: [job.field.id],
        stamp,
      }
      afterCommit(() => emitter.emit('tables:rows_changed', event))
    }
    for (const { category, jobs } of dependents.values())
      await this.recompute.scheduleDependents(
        client,
        category,
        [...new Set(jobs.map((job) => job.rowId))],
        new Set([jobs[0].field.column!]),
        jobs[0].actor.user.id,
        afterCommit
      )
  }

  /**
   * The written cells the outbox wants, staged in the batch's transaction:
   * one `tables:rows_changed` event per table, writer (actor, source,
   * bypass) and round, with one change per row. A row written twice in a
   * batch (one stamp) is in two rounds: its events carry the round as `seq`
   * (each change its own delivery) and are staged in round order (the
   * deliveries of a row keep the order the writes applied).
   */
  private async stageChanges(
    client: QueryClientContract,
    stamp: number,
    afterCommit: (callback: () => unknown) => void,
    batch: CellWrite[],
    outcomes: Map<CellWrite, CellOutcome>,
    changes: Map<CellWrite, StagedChange>
  ) {
    const events = new Map<string, { event: RowsChanging; round: number }>()
    for (const job of batch) {
      const staged = changes.get(job)
      if (!staged || outcomes.get(job) !== WRITTEN) continue
      const base = changeOf(job.scope, job.actor, job.input)
      const key = [
        job.category.id,
        base.actorId,
        base.onBehalfOf,
        base.source,
        base.tokenId,
        base.bypassUrlTrigger,
        staged.round,
      ].join('|')
      let group = events.get(key)
      if (!group) {
        const event: RowsChanging = { ...base, stamp, catName: job.category.name, changes: [] }
        if (staged.round) event.seq = staged.round
        group = { event, round: staged.round }
        events.set(key, group)
      }
      group.event.modified.push(job.rowId)
      if (!group.event.fieldIds.includes(staged.change.fieldId))
        group.event.fieldIds.push(staged.change.fieldId)
      group.event.changes.push({ id: job.rowId, fields: [staged.change] })
    }
    const ordered = [...events.values()].sort((one, other) => one.round - other.round)
    for (const { event } of ordered)
      await this.outbox.stage(client, 'tables:rows_changed', event, afterCommit)
  }

  /** One UPDATE for writes of distinct rows of one table; sets each write's outcome. */
  private async applyRound(
    client: QueryClientContract,
    stamp: number,
    at: string,
    category: CategoryMeta,
    round: CellWrite[],
    outcomes: Map<CellWrite, CellOutcome>,
    entries: HistoryEntry[],
    staging: (job: CellWrite, change: RowFieldChange) => void
  ) {
    const table = quoteId(rowTableName(category.id))
    const mysql = client.dialect.name === 'mysql'
    const marks = (count: number) => Array.from({ length: count }, () => '?').join(', ')
    const notFound = (job: CellWrite) =>
      outcomes.set(job, { error: rpcError('NOT_FOUND', `Row ${job.rowId} not found`) })
    const formulas = category.fields.filter((field) => field.type === 'formula' && field.column)
    let live = round
    const states = new Map<number, Row>()
    // Read first for formulas (computed from the whole row) and for history (old values).
    const history = this.history.enabled()
    const staged = round.some((job) => job.staged)
    const readFirst = formulas.length > 0 || history || staged
    if (readFirst) {
      let rows: Row[]
      try {
        // Locked on MariaDB when recording (history, outbox): a concurrent write of the row waits, its old value is ours.
        // History alone needs only the written columns; formulas are computed from the whole row.
        const columns = formulas.length
          ? 't.*'
          : ['id', ...new Set(round.map((job) => job.field.column!))]
              .map((column) => `t.${quoteId(column)}`)
              .join(', ')
        rows = await readQuery(
          `SELECT ${columns}, (SELECT meta_version FROM table_categories WHERE id = ?) AS quire_mv FROM ${table} t WHERE t.id IN (${marks(round.length)})${(history || staged) && mysql ? ' FOR UPDATE' : ''}`,
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
        this.computed.computeFormulas(category, next)
        states.set(job.rowId, next)
        live.push(job)
        if (!history && !job.staged) continue
        const [change] = fieldChanges(category, [job.field.column!], row, next)
        if (job.staged) staging(job, change)
        if (history) {
          const write = this.history.writeOf(
            job.actor,
            stamp,
            operationOf(job.actor, job.input.source, job.input.operation)
          )
          for (const entry of this.history.entriesOf(write, category, job.rowId, 'update', [
            change,
          ]))
            entries.push(Object.assign(entry, { job }))
        }
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
    const guard = readFirst
      ? ''
      : ' AND (SELECT meta_version FROM table_categories WHERE id = ?) = ?'
    if (!readFirst) bindings.push(category.id, category.metaVersion)
    let result: any
    try {
      result = await writeQuery(
        client,
        `UPDATE ${table} SET ${sets.join(', ')} WHERE id IN (${marks(live.length)})${guard}`,
        bindings
      )
    } catch (error) {
      if (isTransientDbError(error) || readFirst) throw error
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
    // Fewer rows written: a missing row (refused alone) or, without a read, a structure change.
    const present = await writeQuery(
      client,
      `SELECT t.id, (SELECT meta_version FROM table_categories WHERE id = ?) AS quire_mv FROM ${table} t WHERE t.id IN (${marks(live.length)})${mysql ? ' FOR UPDATE' : ''}`,
      [category.id, ...live.map((job) => job.rowId)]
    )
    if (!readFirst && present.length && Number(present[0].quire_mv) !== category.metaVersion) {
      for (const job of live) outcomes.set(job, STALE) // the guard wrote nothing
      return
    }
    const ids = new Set(present.map((row: Row) => Number(row.id)))
    for (const job of live) {
      if (ids.has(job.rowId)) outcomes.set(job, WRITTEN)
      else notFound(job)
    }
  }
}
