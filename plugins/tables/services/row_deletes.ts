import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { OutboxService } from '#core/outbox/outbox_service'
import { hasSideTable, rowTableName, sideTableName } from '../lib/field_types.js'
import { chunks } from '../lib/row_sql.js'
import type { RowsChanged } from '../events.js'
import { CommentsService } from './comments_service.js'
import { RecomputeService } from './recompute_service.js'
import { changeOf, fieldChanges, publishRowChanges } from './row_changes.js'
import { HistoryService } from './history_service.js'
import { categoryOfRowId } from './schema_service.js'
import { TableAccess, type TableScope } from './table_access.js'

export interface DeleteOptions {
  b_o?: unknown
  bypassUrlTrigger?: boolean
  source?: 'api' | 'socket'
  /** The operation recorded in the cells' history (default: from source). */
  operation?: string
}

/**
 * Row deletes (deleteTableRow, deleteTableRows): rows, their side-table
 * entries and comments go in one stamped transaction; links of other rows
 * that pointed at them are cut in it, and those rows are recomputed by a
 * job once the delete committed.
 */
@inject()
export class RowDeletes {
  constructor(
    private stamps: StampService,
    private access: TableAccess,
    private comments: CommentsService,
    private recompute: RecomputeService,
    private outbox: OutboxService,
    private history: HistoryService
  ) {}

  /** Deletes rows (of one or several tables); answers how many existed. */
  async delete(actor: Actor, rowIds: number[], options: DeleteOptions = {}) {
    const byCategory = new Map<number, number[]>()
    for (const id of rowIds) {
      const categoryId = categoryOfRowId(id)
      byCategory.set(categoryId, [...(byCategory.get(categoryId) ?? []), id])
    }
    const scopes: { scope: TableScope; ids: number[] }[] = []
    for (const [categoryId, ids] of byCategory) {
      scopes.push({
        scope: await this.access.forCategory(actor, categoryId, 'delete', options.b_o),
        ids,
      })
    }
    let deleted = 0
    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      for (const { scope, ids } of scopes) {
        const { category } = scope
        const existing: number[] = []
        // Staged for the outbox (webhooks) or recorded in history: the deleted rows' values are read.
        const staged = this.outbox.wants('tables:rows_changed', changeOf(scope, actor, options))
        const recorded = this.history.enabled()
        const before = new Map<number, Record<string, unknown>>()
        for (const part of chunks(ids)) {
          const query = trx.from(rowTableName(category.id)).whereIn('id', part)
          const rows = await (staged || recorded ? query.select('*') : query.select('id'))
          existing.push(...rows.map((row) => Number(row.id)))
          if (staged || recorded) for (const row of rows) before.set(Number(row.id), row)
        }
        if (existing.length === 0) continue
        for (const part of chunks(existing)) {
          for (const field of category.fields) {
            if (hasSideTable(field))
              await trx.from(sideTableName(category.id, field.id)).whereIn('row_id', part).delete()
          }
          await trx.from(rowTableName(category.id)).whereIn('id', part).delete()
          if (category.fields.some((field) => field.type === 'comments'))
            await this.comments.deleteForRows(trx, category.id, part)
        }
        deleted += existing.length
        // Cut links that pointed at the deleted rows now; those rows are recomputed by a job.
        for (const { source, link } of await this.recompute.dependents(category, trx)) {
          const side = sideTableName(source.id, link.id)
          const sourceIds = new Set<number>()
          for (const part of chunks(existing, 1000)) {
            const rows = await trx.from(side).whereIn('value', part).select('row_id')
            for (const row of rows) sourceIds.add(Number(row.row_id))
            await trx.from(side).whereIn('value', part).delete()
          }
          if (sourceIds.size)
            afterCommit(() =>
              this.recompute.dispatch('rows', source.id, [...sourceIds], actor.user.id)
            )
        }
        const event: RowsChanged = { ...changeOf(scope, actor, options), deleted: existing, stamp }
        await publishRowChanges(
          { history: this.history, outbox: this.outbox },
          { trx, afterCommit },
          {
            actor,
            options,
            category,
            event,
            changes: (staged || recorded ? existing : []).map((id) => ({
              id,
              action: 'delete' as const,
              fields: fieldChanges(category, null, before.get(id)!, null),
            })),
            staged,
          }
        )
      }
    })
    return { deleted, formLastModified: Math.floor(Date.now() / 1000) }
  }
}
