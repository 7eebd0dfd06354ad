import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { StampService } from '#core/services/stamp_service'
import { QueueService } from '#core/services/queue_service'
import { rowTableName, sideTableName, sqlColumnOf, type FieldDef } from '../lib/field_types.js'
import { chunks } from '../lib/row_sql.js'
import type { RowsChanged } from '../events.js'
import { ComputedFields, primaryField } from './computed_fields.js'
import { rowIdPages } from './row_pages.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import { TableAccess } from './table_access.js'

/** Row ids per tables.recompute job. */
const RECOMPUTE_JOB_ROWS = 1000
/** Links followed from a changed row to the rows that show it (cycles stop there). */
const MAX_PROPAGATION_DEPTH = 3

/** Payload of the `tables.recompute` job (see RecomputeService.runJob). */
export interface RecomputeJob {
  kind: 'dependents' | 'rows'
  categoryId: number
  rowIds: number[]
  /** Columns the write changed (kind 'dependents'); empty: any column. */
  columns: string[]
  actorId: number
}

/** A link field of `source` that points at a table. */
export interface Dependent {
  source: CategoryMeta
  link: FieldDef
}

/**
 * Dependency propagation: rows of other tables that show data of written or
 * deleted rows (link captions, lookups and rollups through a link to them)
 * are recomputed by the `tables.recompute` job once the write committed,
 * never inside the write's transaction. Writes only decide, from metadata,
 * whether a job is needed (scheduleDependents).
 */
@inject()
export class RecomputeService {
  constructor(
    private stamps: StampService,
    private queue: QueueService,
    private meta: MetaService,
    private access: TableAccess,
    private computed: ComputedFields
  ) {}

  /**
   * After a write: when rows of other tables show data of the written rows, a
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
    afterCommit(() => this.dispatch('dependents', category.id, rowIds, actorId, columns))
  }

  /** Queues recompute jobs (RECOMPUTE_JOB_ROWS row ids each). */
  async dispatch(
    kind: RecomputeJob['kind'],
    categoryId: number,
    rowIds: number[],
    actorId: number,
    columns: string[] = []
  ) {
    for (const part of chunks(rowIds, RECOMPUTE_JOB_ROWS)) {
      const payload: RecomputeJob = { kind, categoryId, rowIds: part, columns, actorId }
      await this.queue.dispatch('tables.recompute', payload)
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
  async runJob(job: RecomputeJob) {
    const found = await this.meta.category(Number(job.categoryId))
    if (!found) return // table deleted since
    const rowIds = (job.rowIds ?? []).map(Number).filter(Number.isSafeInteger)
    const changes = new Map<number, Set<number>>()
    const stamp = await this.stamps.write(async ({ trx, stamp: writeStamp, afterCommit }) => {
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

  /** Recomputes every row of a table (after a computed field is added or changed). */
  async recomputeAll(categoryId: number) {
    const found = await this.meta.category(categoryId)
    if (
      !found ||
      !found.category.fields.some((field) =>
        ['link', 'lookup', 'rollup', 'formula'].includes(field.type)
      )
    )
      return
    for await (const ids of rowIdPages(categoryId))
      await this.stamps.write(({ trx, stamp }) =>
        this.recompute(trx, found.category, ids, stamp, 0)
      )
  }

  /** Link fields (in this form) that point at `category`. */
  async dependents(category: CategoryMeta, client: QueryClientContract): Promise<Dependent[]> {
    const out: Dependent[] = []
    for (const row of await this.meta.formLinks(category.formId, client)) {
      if (row.target !== category.id) continue
      const found =
        row.categoryId === category.id ? null : await this.meta.category(row.categoryId, client)
      const source = row.categoryId === category.id ? category : found?.category
      const link = source?.fields.find((field) => field.id === row.id)
      if (source && link) out.push({ source, link })
    }
    return out
  }

  /**
   * Rows elsewhere that show data of the changed rows are recomputed in the
   * given transaction, following links up to MAX_PROPAGATION_DEPTH tables deep.
   */
  private async propagate(
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
  private async recompute(
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
      const before = rows.map((row) => JSON.stringify(this.computed.columnsOf(category, row)))
      await this.computed.computeRows(trx, category, rows)
      const changed: number[] = []
      for (const [index, row] of rows.entries()) {
        if (JSON.stringify(this.computed.columnsOf(category, row)) === before[index]) continue
        row.sstamp = stamp
        changed.push(Number(row.id))
        await trx.from(table).where('id', row.id).update(this.computed.columnsOf(category, row))
      }
      if (changes && changed.length) {
        const set = changes.get(category.id) ?? new Set<number>()
        for (const id of changed) set.add(id)
        changes.set(category.id, set)
      }
      await this.propagate(trx, category, changed, null, stamp, depth, changes)
    }
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

  private async announce(changes: Map<number, Set<number>>, stamp: number, actorId: number) {
    for (const [categoryId, ids] of changes) {
      const found = await this.meta.category(categoryId)
      if (!found) continue
      const book = await this.access.book(found.form.bookId)
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
}
