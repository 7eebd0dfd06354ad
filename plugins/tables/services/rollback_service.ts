import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { COMPUTED_TYPES } from '../lib/field_types.js'
import { chunks, type Row } from '../lib/row_sql.js'
import { rowIdOf } from '../lib/wire.js'
import { HISTORY_TABLE } from './history_service.js'
import { RowWriter, type RowWrite } from './row_writer.js'
import { categoryOfRowId } from './schema_service.js'
import { TableAccess } from './table_access.js'

export interface RollbackInput {
  b_o?: string
  rowId: string
  changeId?: number
  sstamp?: number
  scope?: string
  bypassUrlTrigger?: boolean
}

/**
 * rollBackBeforeChange (issue 21 item 2). Each row goes back to the old
 * values of its first change from the starting point on (for every field
 * changed since), in one RowWriter write: stamped, recorded in history
 * (operation rollBackBeforeChange, so it can be rolled back in turn),
 * announced on the socket and to webhooks, with links, lookups, rollups and
 * formulas recomputed. Every check is made before that write: a refusal
 * changes nothing.
 */
@inject()
export class RollbackService {
  constructor(
    private access: TableAccess,
    private writer: RowWriter
  ) {}

  async rollBack(actor: Actor, input: RollbackInput) {
    const rowId = rowIdOf(input.rowId)
    const scope = (input.scope ?? 'row').trim() || 'row'
    if (scope !== 'row' && scope !== 'change')
      throw rpcError('INVALID_PARAMETER', `Invalid parameter scope: ${scope} (row or change)`, {
        field: 'scope',
      })
    if (input.changeId === undefined && input.sstamp === undefined)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: changeId (or sstamp)', {
        field: 'changeId',
      })
    if (scope === 'change' && input.changeId === undefined)
      throw rpcError(
        'MISSING_PARAMETER',
        'Missing parameter: changeId (scope=change names a change)',
        {
          field: 'changeId',
        }
      )
    const categoryId = categoryOfRowId(rowId)
    const { category } = await this.access.forCategory(actor, categoryId, 'write', input.b_o)

    // The starting entry: the change named, or the row's first change at or after sstamp.
    const start =
      input.changeId !== undefined
        ? await this.storedEntry(categoryId, rowId, input.changeId)
        : await db
            .from(HISTORY_TABLE)
            .where('category_id', categoryId)
            .where('row_id', rowId)
            .where('sstamp', '>=', input.sstamp!)
            .orderBy('id', 'asc')
            .first()
    if (!start)
      throw rpcError(
        'NOT_FOUND',
        input.changeId !== undefined
          ? `Change ${input.changeId} is not a recorded change of row ${rowId}`
          : `Row ${rowId} has no recorded change since sstamp ${input.sstamp}`
      )

    // Per row, the first entry to undo: a change is a whole write (all the cells it set), of the
    // row alone or, with scope=change, of every row the write touched.
    const firsts = db
      .from(HISTORY_TABLE)
      .where('write_id', start.write_id)
      .where('category_id', categoryId)
      .groupBy('row_id')
      .select('row_id')
      .select(db.raw('MIN(id - entry_count + 1) AS first_id'))
    if (scope === 'row') firsts.where('row_id', rowId)
    const from = new Map<number, number>()
    for (const row of await firsts) from.set(Number(row.row_id), Number(row.first_id))

    // Every entry from there on, oldest first: each field takes the old value of its first one.
    const restore = new Map<number, Map<number, unknown>>()
    const lowest = Math.min(...from.values())
    for (const part of chunks([...from.keys()], 1000)) {
      const entries: Row[] = await db
        .from(HISTORY_TABLE)
        .where('category_id', categoryId)
        .whereIn('row_id', part)
        .where('id', '>=', lowest)
        .orderBy('id', 'asc')
        .select('id', 'row_id', 'field_id', 'field_type', 'action', 'old_value', 'entry_count')
      for (const entry of entries) {
        const id = Number(entry.row_id)
        if (Number(entry.id) - Number(entry.entry_count) + 1 < from.get(id)!) continue
        if (entry.action !== 'update')
          throw rpcError(
            'CONFLICT',
            entry.action === 'create'
              ? `Row ${id} was created by a change being rolled back: delete it instead`
              : `Row ${id} was deleted after the change: it cannot be rolled back`,
            { rowId: id }
          )
        const field = category.fields.find((candidate) => candidate.id === Number(entry.field_id))
        if (!field)
          throw rpcError(
            'CONFLICT',
            `Field ${entry.field_id} was deleted since the change: the rollback would lose its values`,
            { fieldId: Number(entry.field_id) }
          )
        if (field.type !== entry.field_type)
          throw rpcError(
            'CONFLICT',
            `Field "${field.name}" changed type since the change (${entry.field_type} to ${field.type})`,
            { fieldId: field.id }
          )
        const values = restore.get(id) ?? new Map<number, unknown>()
        if (!values.has(field.id) && !COMPUTED_TYPES.has(field.type))
          values.set(field.id, JSON.parse(entry.old_value ?? 'null'))
        restore.set(id, values)
      }
    }

    const writes: RowWrite[] = [...restore.entries()]
      .filter(([, values]) => values.size > 0)
      .map(([id, values]) => ({
        key: String(id),
        values: Object.fromEntries([...values].map(([fieldId, value]) => [fieldId, value ?? ''])),
      }))
    if (writes.length === 0)
      return { catId: categoryId, rowIds: [], formLastModified: Math.floor(Date.now() / 1000) }
    const result = await this.writer.write(actor, writes, {
      categoryId,
      b_o: input.b_o,
      bypassUrlTrigger: input.bypassUrlTrigger,
      operation: 'rollBackBeforeChange',
    })
    return {
      catId: categoryId,
      rowIds: writes.map((write) => Number(write.key)),
      formLastModified: result.formLastModified,
    }
  }

  /**
   * The stored entry that holds change `changeId` of a row: its own, or the created row's
   * packed entries (ids up to the stored row's, history_service.ts PACKED_FIELD_ID).
   */
  private storedEntry(categoryId: number, rowId: number, changeId: number): Promise<Row | null> {
    return db
      .from(HISTORY_TABLE)
      .where('category_id', categoryId)
      .where('row_id', rowId)
      .where('id', '>=', changeId)
      .whereRaw('id - entry_count < ?', [changeId])
      .orderBy('id', 'asc')
      .first()
  }
}
