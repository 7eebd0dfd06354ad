import emitter from '@adonisjs/core/services/emitter'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import type { OutboxService } from '#core/outbox/outbox_service'
import { serializeCell, type FieldDef } from '../lib/field_types.js'
import type { Row } from '../lib/row_sql.js'
import { urlTriggerDefaults } from '../lib/trigger_url_hook.js'
import type { RowFieldChange, RowsChanged } from '../events.js'
import { operationOf, type HistoryAction, type HistoryService } from './history_service.js'
import type { CategoryMeta } from './meta_service.js'

/**
 * Old and new values of the fields a write touched (the outbox topic
 * `tables:rows_changed`, events.ts RowsChanging), in their wire form.
 * `before` null: a created row; `after` null: a deleted row.
 */
export function fieldChanges(
  category: CategoryMeta,
  columns: Iterable<string> | null,
  before: Row | null,
  after: Row | null
): RowFieldChange[] {
  return changesOfFields(fieldsOfColumns(category, columns), before, after)
}

/** fieldChanges of fields already chosen (fieldsOfColumns), in their order. */
export function changesOfFields(
  fields: FieldDef[],
  before: Row | null,
  after: Row | null
): RowFieldChange[] {
  const changes: RowFieldChange[] = []
  for (const field of fields)
    changes.push({
      fieldId: field.id,
      name: field.name,
      old: before ? serializeCell(field, before).value : null,
      new: after ? serializeCell(field, after).value : null,
    })
  return changes
}

/**
 * The fields (in the table's order) of stored columns among `columns` (null: all). The rows of
 * a bulk write name the same columns: the list is kept per metadata object and column list.
 */
const fieldsByColumns = new WeakMap<CategoryMeta, Map<string, FieldDef[]>>()
export function fieldsOfColumns(
  category: CategoryMeta,
  columns: Iterable<string> | null
): FieldDef[] {
  const list = columns ? [...columns] : null
  const key = list ? list.join('\u0000') : '\u0001'
  let cache = fieldsByColumns.get(category)
  if (!cache) {
    cache = new Map()
    fieldsByColumns.set(category, cache)
  }
  let fields = cache.get(key)
  if (!fields) {
    const wanted = list ? new Set(list) : null
    fields = category.fields.filter(
      (field: FieldDef) => field.column && (!wanted || wanted.has(field.column))
    )
    if (cache.size >= 64) cache.clear()
    cache.set(key, fields)
  }
  return fields
}

/** The parts of a `tables:rows_changed` event known before the write (its outbox check uses them). */
export function changeOf(
  scope: { book: { id: number; b_o: string; b_c: string }; category: { id: number } },
  actor: Actor,
  options: { bypassUrlTrigger?: boolean; source?: 'api' | 'socket' }
): RowsChanged {
  return {
    bookId: scope.book.id,
    b_o: scope.book.b_o,
    b_c: scope.book.b_c,
    categoryId: scope.category.id,
    created: [],
    modified: [],
    deleted: [],
    fieldIds: [],
    actorId: actor.user.id,
    onBehalfOf: actor.onBehalf ? actor.principal.id : null,
    stamp: 0,
    bypassUrlTrigger: options.bypassUrlTrigger ?? urlTriggerDefaults.apiBypass,
    // A write by a table token (table_tokens_service) is the token's: its id rides along.
    source: actor.token ? 'token' : (options.source ?? 'api'),
    ...(actor.token ? { tokenId: actor.token.id } : {}),
  }
}

/** One row of a RowWriter or RowDeletes write: what happened to it and its fields' values. */
export interface RowChange {
  id: number
  action: HistoryAction
  fields: RowFieldChange[]
}

/**
 * The end of a RowWriter or RowDeletes transaction, the same for both: the
 * rows' changes go to cell history and, when `staged` (a contributor wants
 * the event: webhooks), to the outbox with the table's name; the plain event
 * is emitted after commit.
 */
export async function publishRowChanges(
  services: { history: HistoryService; outbox: OutboxService },
  scope: {
    trx: TransactionClientContract
    afterCommit: (callback: () => unknown) => void
  },
  write: {
    actor: Actor
    options: { source?: string; operation?: string }
    category: CategoryMeta
    event: RowsChanged
    changes: RowChange[]
    staged: boolean
  }
) {
  const { history, outbox } = services
  const { trx, afterCommit } = scope
  const { actor, category, event, changes } = write
  if (history.enabled()) {
    const context = history.writeOf(
      actor,
      event.stamp,
      operationOf(actor, write.options.source, write.options.operation)
    )
    await history.recordRows(trx, context, category, changes)
  }
  if (write.staged)
    await outbox.stage(
      trx,
      'tables:rows_changed',
      {
        ...event,
        catName: category.name,
        changes: changes.map((change) => ({ id: change.id, fields: change.fields })),
      },
      afterCommit
    )
  afterCommit(() => emitter.emit('tables:rows_changed', event))
}
