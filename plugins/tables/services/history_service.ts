import { randomBytes } from 'node:crypto'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import env from '#start/env'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { isMysql, nativeTransaction, quoteId, readQuery, writeQuery } from '#core/native_sql'
import { COMPUTED_TYPES, activityCellKey, type FieldDef } from '../lib/field_types.js'
import { chunks, insertSql, type Row } from '../lib/row_sql.js'
import { CommentsService, type CommentUsers } from './comments_service.js'
import type { RowFieldChange } from '../events.js'
import type { CategoryMeta } from './meta_service.js'
import { categoryOfRowId } from './schema_service.js'
import { TableAccess } from './table_access.js'
import { rowIdOf } from '../lib/wire.js'

export const HISTORY_TABLE = 'table_cell_history'

export type HistoryAction = 'create' | 'update' | 'delete'

/** Who made a write and through what: shared by every entry of the write. */
export interface HistoryWrite {
  actor: Actor
  /** The operation (`updateTableValue`, `rollBackBeforeChange`, ...), `socket:13`, `console` or `token:<id>`. */
  operation: string
  /** One id per write: every row of a bulk write shares it (rollBackBeforeChange scope=change). */
  writeId: string
  stamp: number
}

/** One changed cell. */
export interface HistoryEntry {
  write: HistoryWrite
  categoryId: number
  rowId: number
  field: FieldDef
  action: HistoryAction
  old: unknown
  new: unknown
  /** old and new as stored (JSON), made once by entriesOf for its comparison. */
  oldJson?: string
  newJson?: string
}

/**
 * The columns of a stored entry, in the order `store` binds them: `id` last, bound only where
 * recordRows gives the ids (SQLite, when it packs a created row's entries).
 */
const ENTRY_COLUMNS = [
  'category_id',
  'row_id',
  'field_id',
  'field_type',
  'write_id',
  'action',
  'operation',
  'user_id',
  'user_code',
  'principal_id',
  'principal_code',
  'sstamp',
  'created_at',
  'old_value',
  'new_value',
  'entry_count',
  'id',
]
/** Entries per INSERT: SQLite binds at most 32,766 values a statement. */
const ENTRIES_PER_STATEMENT = 1000

/**
 * A created row's entries stored as one (SQLite): field_id 0, `entry_count` entries whose
 * ids run up to the stored row's, new_value their `[fieldId, fieldType, value]` in id order.
 * Each row of the table is 3 index entries and a B-tree cell: a bulk insert of 4-field rows
 * wrote 4 of each per row, and its history cost nearly as much as the rows themselves.
 */
export const PACKED_FIELD_ID = 0
const PACKED_FIELD_TYPE = 'packed'
/**
 * The packed rows, as SQLite's partial index `table_cell_history_packed_idx` names them (a
 * literal: a bound value would not tell the planner the index applies).
 */
const PACKED_CONDITION = `field_id = ${PACKED_FIELD_ID}`

/** One row of table_cell_history as `record` writes it: an entry, or a created row's, packed. */
interface StoredEntry {
  write: HistoryWrite
  categoryId: number
  rowId: number
  fieldId: number
  fieldType: string
  action: HistoryAction
  oldJson: string
  newJson: string
  count: number
  /** Given where entries are packed (their ids are reserved); else the table's own. */
  id: number | null
}

/** A change as getRowHistory and activity cells show it. */
export interface WireChange {
  id: number
  /** A readable summary: "Alice Martin changed Status". */
  m: string
  /** The write's id: the entries of one write (one request, all its rows) share it. */
  mid: string
  action: HistoryAction
  /** Unix seconds. */
  c: number
  /** The write's stamp (sstamp). */
  s: number
  /** The user the write was made as: code, display name, the user's stamp. */
  u: { c: string; n: string; s: number }
}

/** Retention (README, "Cell history"): 0 keeps everything. */
export interface HistoryRetention {
  maxPerTable: number
  days: number
}

const PRUNE_EVERY_MS = 10 * 60_000

/**
 * Write ids: this process's random prefix and a counter (24 hex digits). Unique across
 * instances and restarts like 12 random bytes per write were, without a call into the CSPRNG
 * on every updateTableValue (it was a visible part of the write's CPU time); a write id is
 * no secret, it only groups the entries of one write.
 */
const WRITE_ID_PREFIX = randomBytes(6).toString('hex')
let writeCounter = 0

/** The operation a history entry names: the console, the socket's type 13, else the api.php operation. */
export function operationOf(actor: Actor, source?: string, operation?: string): string {
  if (actor.token) return `token:${actor.token.id}` // a row or form token (table_tokens_service)
  if (!actor.session) return 'console' // admin/actor.ts: console writes carry no api session
  if (source === 'socket') return 'socket:13'
  return operation ?? 'api'
}

/**
 * Cell history (issue 21 item 1): the writers (CellWriter, RowWriter,
 * RowDeletes) hand their old and new values to `record` inside their own
 * transaction, so a write and its history commit together. Formula, lookup
 * and other computed columns are not recorded (they follow from the rest).
 * Reads: getRowHistory and activity cells (one query for the counts and one
 * for the last entries per page, never per row).
 */
@inject()
export class HistoryService {
  private pruner: NodeJS.Timeout | null = null

  constructor(
    private access: TableAccess,
    private comments: CommentsService
  ) {}

  /** TABLES_HISTORY=false turns recording off (the benchmark compares both). */
  enabled(): boolean {
    return env.get('TABLES_HISTORY', true) !== false
  }

  newWriteId(): string {
    return WRITE_ID_PREFIX + (writeCounter++).toString(16).padStart(12, '0')
  }

  /** The context of a write by `actor`, its entries to come. */
  writeOf(actor: Actor, stamp: number, operation: string, writeId?: string): HistoryWrite {
    return { actor, operation, writeId: writeId ?? this.newWriteId(), stamp }
  }

  /**
   * Entries of one row from its before/after state (wire values); an
   * unchanged cell and computed fields are left out.
   */
  entriesOf(
    write: HistoryWrite,
    category: CategoryMeta,
    rowId: number,
    action: HistoryAction,
    changes: { fieldId: number; old: unknown; new: unknown }[]
  ): HistoryEntry[] {
    const entries: HistoryEntry[] = []
    for (const change of changes) {
      const field = recordedFieldOf(category, change.fieldId)
      if (!field) continue
      if (action === 'delete' && isEmpty(change.old)) continue
      const oldJson = toJson(change.old)
      const newJson = action === 'create' ? createdCellJson(change.new) : toJson(change.new)
      if (newJson === null) continue
      // (undefined and null store alike, as null, but were told apart: they still are.)
      if (oldJson === newJson && (change.old === undefined) === (change.new === undefined)) continue
      entries.push({
        write,
        categoryId: category.id,
        rowId,
        field,
        action,
        old: change.old,
        new: change.new,
        oldJson,
        newJson,
      })
    }
    return entries
  }

  /**
   * Records the rows of a RowWriter or RowDeletes write (publishRowChanges), in the caller's
   * transaction. On SQLite a created row's cells are stored packed, as one (PACKED_FIELD_ID),
   * made straight from its changes: a bulk write of 10,000 4-field rows made 40,000 entry
   * objects, then packed them in a second pass (bench:tables bulk, --cpu-prof: 0.60 s against
   * 0.24 s now for the same rows).
   */
  async recordRows(
    client: QueryClientContract,
    write: HistoryWrite,
    category: CategoryMeta,
    rows: { id: number; action: HistoryAction; fields: RowFieldChange[] }[]
  ) {
    if (!this.enabled()) return
    // Packing gives ids, read from the table's sequence: only under the transaction's write lock.
    const packing = client.dialect.name !== 'mysql' && client.isTransaction
    const stored: StoredEntry[] = []
    let packed = false
    for (const row of rows) {
      if (packing && row.action === 'create') {
        const creation = packedCreation(write, category, row.id, row.fields)
        if (creation) stored.push(creation)
        packed ||= (creation?.count ?? 0) > 1
      } else
        for (const entry of this.entriesOf(write, category, row.id, row.action, row.fields))
          stored.push(storedEntryOf(entry))
    }
    if (packed) await assignIds(client, stored)
    await this.store(client, stored)
  }

  /** Inserts entries (one-cell writes: CellWriter) in the caller's transaction, one row each. */
  async record(client: QueryClientContract, entries: HistoryEntry[]) {
    if (this.enabled()) await this.store(client, entries.map(storedEntryOf))
  }

  /**
   * Inserts stored entries, one statement per 1,000, their values bound straight from the
   * entries. On SQLite a value every entry of the statement shares (the write's id, user,
   * stamp, time, the action, often the old value) is bound once for all of them: `INSERT ...
   * SELECT ?, ..., columnN FROM (VALUES ...)`. Each bound value is a conversion in the driver;
   * a bulk write's entries share 10 or 11 of their 15.
   */
  private async store(client: QueryClientContract, stored: StoredEntry[]) {
    if (stored.length === 0) return
    const now = Math.floor(Date.now() / 1000)
    const sqlite = client.dialect.name !== 'mysql'
    const withIds = stored[0].id !== null
    lastWrite = null
    for (const part of chunks(stored, ENTRIES_PER_STATEMENT)) {
      const first = valuesOf(part[0], now, withIds)
      const shared = sqlite && part.length > 1 ? sharedColumns(part, first, now, withIds) : null
      if (!shared || shared.every(Boolean)) {
        const bindings: unknown[] = []
        for (const entry of part) pushValues(bindings, entry, now, null, withIds)
        await writeQuery(client, plainInsertSql(part.length, withIds), bindings)
        continue
      }
      const bindings: unknown[] = []
      const select: string[] = []
      let varying = 0
      shared.forEach((isShared, column) => {
        if (isShared) {
          select.push('?')
          bindings.push(first[column])
        } else select.push(`column${++varying}`)
      })
      for (const entry of part) pushValues(bindings, entry, now, shared, withIds)
      await writeQuery(client, sharedInsertSql(select, varying, part.length), bindings)
    }
    lastWrite = null
  }

  // ---- reads ---------------------------------------------------------------

  /**
   * Puts activity cells on a page's rows (serializeCell reads them): the
   * number of entries and the last one of each row, in two queries, and the
   * users of those in a third.
   */
  async attach(category: CategoryMeta, fields: FieldDef[], rows: Row[]) {
    const activity = fields.filter((field) => field.type === 'activity')
    if (activity.length === 0 || rows.length === 0) return
    const totals = new Map<number, { total: number; last: number }>()
    for (const part of chunks(
      rows.map((row) => Number(row.id)),
      1000
    )) {
      const counted = await readQuery(
        `SELECT row_id, COUNT(*) AS total, MAX(id) AS last_id FROM ${HISTORY_TABLE}
         WHERE category_id = ? AND row_id IN (${part.map(() => '?').join(', ')}) GROUP BY row_id`,
        [category.id, ...part]
      )
      for (const row of counted)
        totals.set(Number(row.row_id), { total: Number(row.total), last: Number(row.last_id) })
      // Packed rows' entries past their first (SQLite; the row index counts each once).
      for (const row of await packedExtras(category.id, part))
        totals.get(Number(row.row_id))!.total += Number(row.extra)
    }
    if (totals.size === 0) return
    const lastIds = [...totals.values()].map((entry) => entry.last)
    const lasts = new Map<number, Row>()
    for (const part of chunks(lastIds, 1000)) {
      const found = await readQuery(
        `SELECT * FROM ${HISTORY_TABLE} WHERE id IN (${part.map(() => '?').join(', ')})`,
        part
      )
      // A packed row's last entry holds its id.
      for (const entry of found) lasts.set(Number(entry.row_id), unpackEntries(entry).at(-1)!)
    }
    const users = await this.comments.users([...lasts.values()].map((entry) => entry.user_code))
    for (const row of rows) {
      const counted = totals.get(Number(row.id))
      const last = lasts.get(Number(row.id))
      if (!counted || !last) continue
      const cell = { last: this.wire(category, last, users), total: counted.total }
      for (const field of activity) row[activityCellKey(field.id)] = cell
    }
  }

  /** getRowHistory: a row's changes, newest first, `nbMax` per page (page 1 first). */
  async rowHistory(
    actor: Actor | null,
    input: { b_o?: string; rowId: string; fieldId?: number; page?: number; nbMax?: number }
  ) {
    const rowId = rowIdOf(input.rowId)
    const page = input.page ?? 1
    const nbMax = input.nbMax ?? 50
    if (page < 1)
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter page: 1 or more', { field: 'page' })
    if (nbMax < 1 || nbMax > 500)
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter nbMax: 1 to 500', { field: 'nbMax' })
    const scope = await this.access.forCategory(actor, categoryOfRowId(rowId), 'read', input.b_o)
    const { category } = scope
    if (input.fieldId !== undefined && !category.fields.some((f) => f.id === input.fieldId))
      throw rpcError(
        'INVALID_PARAMETER',
        `Field ${input.fieldId} is not a field of table "${category.name}"`,
        { field: 'fieldId' }
      )
    const { total, entries } = await this.rowEntries(
      category.id,
      rowId,
      input.fieldId,
      (page - 1) * nbMax,
      nbMax
    )
    // Authors and the principals they acted for, in one query.
    const users = await this.comments.users(
      entries.flatMap((entry: Row) => [entry.user_code, entry.principal_code].filter(Boolean))
    )
    return {
      catId: category.id,
      rowId,
      total,
      changes: entries.map((entry: Row) => ({
        ...this.wire(category, entry, users),
        fieldId: Number(entry.field_id),
        fieldType: entry.field_type,
        operation: entry.operation,
        old: parse(entry.old_value),
        new: parse(entry.new_value),
        onBehalfOf: entry.principal_code
          ? {
              c: entry.principal_code,
              n: users[entry.principal_code]?.n ?? entry.principal_code,
            }
          : null,
      })),
    }
  }

  /**
   * A row's entries newest first, `limit` of them from `offset`, and how many there are (of
   * field `fieldId` when given). A stored row is one entry or, packed, a created row's (of which
   * at most one is the field's): the packed ones, few (a row is created once), are read first
   * and tell how many entries come before any stored row, so the page is read from its place
   * (give or take the packed rows' extra entries), not from the row's newest entry.
   */
  private async rowEntries(
    categoryId: number,
    rowId: number,
    fieldId: number | undefined,
    offset: number,
    limit: number
  ): Promise<{ total: number; entries: Row[] }> {
    const ofRow = () =>
      db.from(HISTORY_TABLE).where('category_id', categoryId).where('row_id', rowId)
    const ofField = (entry: Row) => fieldId === undefined || Number(entry.field_id) === fieldId
    const packedRows: Row[] = isMysql()
      ? [] // never packed
      : await ofRow()
          .whereRaw(PACKED_CONDITION)
          .select('id', 'field_id', 'new_value')
          .orderBy('id', 'desc')
    const packed = packedRows.map((stored) => ({
      id: Number(stored.id),
      entries: unpackEntries(stored).filter(ofField).length,
    }))
    const counted =
      fieldId === undefined
        ? await ofRow().count('* as n').first()
        : await ofRow().where('field_id', fieldId).count('* as n').first()
    let total = Number(counted?.n ?? 0)
    if (fieldId === undefined) total -= packed.length
    let extra = 0 // entries past the first of packed rows
    let empty = 0 // packed rows with none of the field's
    for (const row of packed) {
      total += row.entries
      extra += Math.max(0, row.entries - 1)
      if (row.entries === 0) empty++
    }
    if (offset >= total) return { total, entries: [] }

    // Stored rows from the first that may hold the page's first entry.
    const skip = Math.max(0, offset - extra)
    const page = ofRow()
    if (fieldId !== undefined)
      page.where((or) => or.where('field_id', fieldId).orWhere('field_id', PACKED_FIELD_ID))
    const stored: Row[] = await page
      .orderBy('id', 'desc')
      .offset(skip)
      .limit(limit + extra + empty)
    if (stored.length === 0) return { total, entries: [] }
    // The entries before the first stored row read: the `skip` stored rows, packed ones counted at theirs.
    let before = skip
    for (const row of packed) if (row.id > Number(stored[0].id)) before += row.entries - 1
    const entries: Row[] = []
    for (const row of stored)
      for (const entry of unpackEntries(row).filter(ofField).reverse()) {
        if (before++ < offset) continue
        entries.push(entry)
        if (entries.length === limit) return { total, entries }
      }
    return { total, entries }
  }

  /** The wire form shared by activity cells and getRowHistory. */
  private wire(category: CategoryMeta, entry: Row, users: CommentUsers): WireChange {
    const user = users[entry.user_code] ?? { n: entry.user_code, s: 0 }
    const field = category.fields.find((candidate) => candidate.id === Number(entry.field_id))
    const fieldName = field?.name ?? `field ${entry.field_id}`
    const verb = { create: 'set', update: 'changed', delete: 'deleted the row, clearing' }[
      entry.action as HistoryAction
    ]
    return {
      id: Number(entry.id),
      m: `${user.n} ${verb ?? 'changed'} ${fieldName}`,
      mid: String(entry.write_id),
      action: entry.action,
      c: Number(entry.created_at),
      s: Number(entry.sstamp),
      u: { c: entry.user_code, n: user.n, s: user.s },
    }
  }

  // ---- retention -------------------------------------------------------------

  retention(): HistoryRetention {
    return {
      maxPerTable: env.get('TABLES_HISTORY_MAX_PER_TABLE', 0) ?? 0,
      days: env.get('TABLES_HISTORY_DAYS', 0) ?? 0,
    }
  }

  /** Removes entries past the retention (by age, then beyond the newest `maxPerTable` of each table). */
  async prune(retention: HistoryRetention = this.retention()): Promise<number> {
    let removed = 0
    if (retention.days > 0) {
      // Entries are appended in time order: the old ones are those before the first recent one
      // in id order, found by walking the table from its oldest entry (no index on created_at:
      // one less for every write to keep). An old entry after a recent one (a clock set back)
      // waits for a later pass.
      const before = Math.floor(Date.now() / 1000) - retention.days * 86400
      const edge = await db
        .from(HISTORY_TABLE)
        .where('created_at', '>=', before)
        .orderBy('id', 'asc')
        .select('id')
        .first()
      const old = () => {
        const query = db.from(HISTORY_TABLE).where('created_at', '<', before)
        return edge ? query.where('id', '<', edge.id) : query
      }
      const counted = await old().sum('entry_count as n').first()
      await old().delete()
      removed += Number(counted?.n ?? 0)
    }
    if (retention.maxPerTable > 0) {
      const tables = await db
        .from(HISTORY_TABLE)
        .select('category_id')
        .sum('entry_count as total')
        .groupBy('category_id')
        .having(db.raw('SUM(entry_count)') as any, '>', retention.maxPerTable)
      for (const table of tables)
        removed += await this.keepNewest(Number(table.category_id), retention.maxPerTable)
    }
    return removed
  }

  /**
   * Removes a table's entries but its newest `kept`: the stored rows past the one that holds
   * the `kept`th newest entry, and of that one, packed, its older entries (the rest stay, at
   * their ids). Answers the number of entries removed.
   */
  private async keepNewest(categoryId: number, kept: number): Promise<number> {
    return nativeTransaction(async (trx) => {
      const edge = await newestEdge(trx, categoryId, kept)
      if (!edge) return 0
      const count = edge.entry_count
      const keptOfEdge = kept - (edge.upto - count)
      if (keptOfEdge > 0) {
        // Packed (a plain entry is kept or not): its newest entries stay, at their ids.
        const [packed] = await readQuery(
          `SELECT new_value FROM ${HISTORY_TABLE} WHERE id = ?`,
          [edge.id],
          trx
        )
        const cells = JSON.parse(String(packed.new_value)) as unknown[]
        await writeQuery(
          trx,
          `UPDATE ${HISTORY_TABLE} SET entry_count = ?, new_value = ? WHERE id = ?`,
          [keptOfEdge, JSON.stringify(cells.slice(count - keptOfEdge)), edge.id]
        )
      }
      const older = `FROM ${HISTORY_TABLE} WHERE category_id = ? AND id ${keptOfEdge > 0 ? '<' : '<='} ?`
      const [counted] = await readQuery(
        `SELECT SUM(entry_count) AS n ${older}`,
        [categoryId, edge.id],
        trx
      )
      await writeQuery(trx, `DELETE ${older}`, [categoryId, edge.id])
      return Number(counted?.n ?? 0) + (keptOfEdge > 0 ? count - keptOfEdge : 0)
    })
  }

  /** Serving processes prune every 10 minutes when a retention is set. */
  startPruner() {
    const retention = this.retention()
    if (this.pruner || (retention.days <= 0 && retention.maxPerTable <= 0)) return
    this.pruner = setInterval(() => {
      this.prune().catch((error) => logger.error({ err: error }, 'history prune failed'))
    }, PRUNE_EVERY_MS)
    this.pruner.unref()
  }
}

/** A table's fields by id, made once per metadata object (entriesOf runs per row of a write). */
const fieldsById = new WeakMap<CategoryMeta, Map<number, FieldDef>>()
function fieldOf(category: CategoryMeta, fieldId: number) {
  let fields = fieldsById.get(category)
  if (!fields) {
    fields = new Map(category.fields.map((field) => [field.id, field]))
    fieldsById.set(category, fields)
  }
  return fields.get(fieldId)
}

/** The field a change of `fieldId` is recorded for: none when unknown or computed. */
function recordedFieldOf(category: CategoryMeta, fieldId: number): FieldDef | null {
  const field = fieldOf(category, fieldId)
  return field && !COMPUTED_TYPES.has(field.type) ? field : null
}

/**
 * What a created cell records (entriesOf, packedCreation): its value's JSON, or null for none.
 * An empty value records nothing, nor does one stored as JSON null, which equals a creation's
 * old value (null).
 */
function createdCellJson(value: unknown): string | null {
  if (isEmpty(value)) return null
  const json = toJson(value)
  return json === 'null' ? null : json
}

function isEmpty(value: unknown) {
  return (
    value === null ||
    value === undefined ||
    value === '' ||
    value === false ||
    (Array.isArray(value) && value.length === 0)
  )
}

function parse(text: unknown) {
  if (text === null || text === undefined) return null
  try {
    return JSON.parse(String(text))
  } catch {
    return text
  }
}

/** A value as stored in old_value / new_value: JSON, undefined as null. */
function toJson(value: unknown): string {
  return value === null || value === undefined ? 'null' : JSON.stringify(value)
}

/**
 * Per row of `rowIds` with packed entries, how many they hold past one each (`extra`): what
 * `COUNT(*)` of the row index leaves out. None on MariaDB, which stores every entry as a row.
 */
async function packedExtras(categoryId: number, rowIds: number[]): Promise<Row[]> {
  if (isMysql()) return []
  return readQuery(
    `SELECT row_id, SUM(entry_count) - COUNT(*) AS extra FROM ${HISTORY_TABLE}
     WHERE category_id = ? AND row_id IN (${rowIds.map(() => '?').join(', ')}) AND ${PACKED_CONDITION}
     GROUP BY row_id`,
    [categoryId, ...rowIds]
  )
}

/**
 * The stored row of a table's history that holds its `kept + 1`th newest entry, with `upto`
 * the entries from it to the newest; undefined when the table holds no more than `kept`. Read
 * newest first, 1,000 stored rows at a time, up to the edge: a running sum over the whole table
 * (a window function) read every entry of it, however few were to go. On the bench's 1M-row
 * SQLite file (2M stored rows of one table, 1M of another, older): 31-44 ms against 2.9 s to
 * keep 100,000 entries, 290 ms against 2.9 s to keep 1M; 600 ms against 1.7 s for the older
 * table, whose scan passes the other's newer entries.
 */
async function newestEdge(
  client: QueryClientContract,
  categoryId: number,
  kept: number
): Promise<{ id: number; entry_count: number; upto: number } | undefined> {
  // In id order, by the primary key: through the row index the planners sort all of the
  // table's entries for every 1,000 (SQLite, 2M entries: 0.4 s a chunk, 39 s to keep 100,000).
  const byId = client.dialect.name === 'mysql' ? 'FORCE INDEX (PRIMARY)' : 'NOT INDEXED'
  let upto = 0
  let below = Number.MAX_SAFE_INTEGER
  for (;;) {
    const rows = await readQuery(
      `SELECT id, entry_count FROM ${HISTORY_TABLE} ${byId} WHERE category_id = ? AND id < ?
       ORDER BY id DESC LIMIT 1000`,
      [categoryId, below],
      client
    )
    for (const row of rows) {
      upto += Number(row.entry_count)
      if (upto > kept) return { id: Number(row.id), entry_count: Number(row.entry_count), upto }
    }
    if (rows.length < 1000) return undefined
    below = Number(rows[rows.length - 1].id)
  }
}

/**
 * A created row's entries as stored on SQLite: its cells (computed and empty ones left out, as
 * entriesOf does) packed as one when there are two or more; null when it has none.
 */
function packedCreation(
  write: HistoryWrite,
  category: CategoryMeta,
  rowId: number,
  changes: RowFieldChange[]
): StoredEntry | null {
  let cells = ''
  let count = 0
  let first: FieldDef | null = null
  let firstJson = ''
  for (const change of changes) {
    const field = recordedFieldOf(category, change.fieldId)
    const json = field && createdCellJson(change.new)
    if (!field || json === null) continue
    if (count++ === 0) {
      first = field
      firstJson = json
    }
    cells += `${count > 1 ? ',' : ''}${cellPrefixOf(field)}${json}]`
  }
  if (count === 0) return null
  // One literal in storedEntryOf's property order: store reads every entry through one shape.
  return {
    write,
    categoryId: category.id,
    rowId,
    fieldId: count === 1 ? first!.id : PACKED_FIELD_ID,
    fieldType: count === 1 ? first!.type : PACKED_FIELD_TYPE,
    action: 'create',
    oldJson: 'null',
    newJson: count === 1 ? firstJson : `[${cells}]`,
    count,
    id: null,
  }
}

/** `[fieldId,"fieldType",`: how a packed cell begins, made once per field. */
const cellPrefixes = new WeakMap<FieldDef, string>()
function cellPrefixOf(field: FieldDef): string {
  let prefix = cellPrefixes.get(field)
  if (prefix === undefined) {
    prefix = `[${field.id},${JSON.stringify(field.type)},`
    cellPrefixes.set(field, prefix)
  }
  return prefix
}

/**
 * Gives every stored entry its id (a packed one the last of its `count`) from the table's
 * AUTOINCREMENT sequence, which the inserts then raise to the last: no id is ever used twice,
 * pruned ones included. Only under the transaction's write lock.
 */
async function assignIds(client: QueryClientContract, stored: StoredEntry[]) {
  const [sequence] = await readQuery(
    'SELECT seq FROM sqlite_sequence WHERE name = ?',
    [HISTORY_TABLE],
    client
  )
  let lastId = Number(sequence?.seq ?? 0)
  for (const entry of stored) {
    lastId += entry.count
    entry.id = lastId
  }
}

/** A one-row entry as stored. */
function storedEntryOf(entry: HistoryEntry): StoredEntry {
  return {
    write: entry.write,
    categoryId: entry.categoryId,
    rowId: entry.rowId,
    fieldId: entry.field.id,
    fieldType: entry.field.type,
    action: entry.action,
    oldJson: entry.oldJson ?? toJson(entry.old),
    newJson: entry.newJson ?? toJson(entry.new),
    count: 1,
    id: null,
  }
}

/**
 * A stored row's entries, as rows of the table (packed ones unpacked: each its id, field id,
 * type and value as JSON, `entry_count` 1, the rest the stored row's), in id order. Packed
 * entries have no old value (null, as JSON).
 */
export function unpackEntries(stored: Row): Row[] {
  if (Number(stored.field_id) !== PACKED_FIELD_ID) return [stored]
  const cells = JSON.parse(String(stored.new_value)) as [number, string, unknown][]
  const firstId = Number(stored.id) - cells.length + 1
  return cells.map(([fieldId, fieldType, value], i) => ({
    ...stored,
    id: firstId + i,
    field_id: fieldId,
    field_type: fieldType,
    entry_count: 1,
    new_value: toJson(value),
  }))
}

/** The values an entry takes from its write (ENTRY_COLUMNS 4 to 10 and 11, sstamp). */
function writeValuesOf(write: HistoryWrite): unknown[] {
  const { actor, writeId, operation, stamp } = write
  return [
    writeId,
    undefined, // action: the entry's
    operation.length > 64 ? operation.slice(0, 64) : operation,
    actor.user.id,
    actor.user.code,
    actor.onBehalf ? actor.principal.id : null,
    actor.onBehalf ? actor.principal.code : null,
    stamp,
  ]
}

/** An entry's values, in ENTRY_COLUMNS order. */
function valuesOf(entry: StoredEntry, now: number, withIds: boolean): unknown[] {
  const values: unknown[] = []
  pushValues(values, entry, now, null, withIds)
  return values
}

/**
 * Appends an entry's values in ENTRY_COLUMNS order to `out` (the id only `withIds`), those
 * whose column is `shared` left out; one array per write for the values the write gives (a
 * bulk write's entries share it).
 */
let lastWrite: HistoryWrite | null = null
let lastWriteValues: unknown[] = []
function pushValues(
  out: unknown[],
  entry: StoredEntry,
  now: number,
  shared: boolean[] | null,
  withIds: boolean
) {
  // Made again when the write changes (entries come write by write), never kept past a call.
  if (entry.write !== lastWrite) {
    lastWrite = entry.write
    lastWriteValues = writeValuesOf(entry.write)
  }
  const fromWrite = lastWriteValues
  if (!shared) {
    out.push(entry.categoryId, entry.rowId, entry.fieldId, entry.fieldType, fromWrite[0])
    out.push(entry.action, fromWrite[2], fromWrite[3], fromWrite[4], fromWrite[5], fromWrite[6])
    out.push(fromWrite[7], now, entry.oldJson, entry.newJson, entry.count)
    if (withIds) out.push(entry.id)
    return
  }
  if (!shared[0]) out.push(entry.categoryId)
  if (!shared[1]) out.push(entry.rowId)
  if (!shared[2]) out.push(entry.fieldId)
  if (!shared[3]) out.push(entry.fieldType)
  if (!shared[4]) out.push(fromWrite[0])
  if (!shared[5]) out.push(entry.action)
  for (let column = 6; column <= 11; column++) if (!shared[column]) out.push(fromWrite[column - 4])
  if (!shared[12]) out.push(now)
  if (!shared[13]) out.push(entry.oldJson)
  if (!shared[14]) out.push(entry.newJson)
  if (!shared[15]) out.push(entry.count)
  if (withIds && !shared[16]) out.push(entry.id)
}

/**
 * Which of ENTRY_COLUMNS hold the same value (`first`'s) in every entry of `part`: the columns
 * given by the write are compared once per distinct write, not once per entry.
 */
function sharedColumns(
  part: StoredEntry[],
  first: unknown[],
  now: number,
  withIds: boolean
): boolean[] {
  const shared = first.map(() => true)
  if (withIds) shared[16] = false // ids differ
  let write = part[0].write
  for (const entry of part) {
    if (shared[0] && entry.categoryId !== first[0]) shared[0] = false
    if (shared[1] && entry.rowId !== first[1]) shared[1] = false
    if (shared[2] && entry.fieldId !== first[2]) shared[2] = false
    if (shared[3] && entry.fieldType !== first[3]) shared[3] = false
    if (shared[5] && entry.action !== first[5]) shared[5] = false
    if (shared[13] && entry.oldJson !== first[13]) shared[13] = false
    if (shared[14] && entry.newJson !== first[14]) shared[14] = false
    if (shared[15] && entry.count !== first[15]) shared[15] = false
    if (entry.write !== write) {
      write = entry.write
      const values = valuesOf(entry, now, withIds)
      for (const column of [4, 6, 7, 8, 9, 10, 11])
        if (shared[column] && values[column] !== first[column]) shared[column] = false
    }
  }
  return shared
}

/**
 * SQLite's insert of `count` entries whose shared values are bound once: `select` names each
 * column's source, `?` or the VALUES row's `columnN` (SQLite names a VALUES clause's columns
 * column1, column2, ...). The rows are inserted in the order of the VALUES clause.
 */
function sharedInsertSql(select: string[], varying: number, count: number) {
  return memoized(`${select.join(',')}\u0000${count}`, () =>
    makeSharedInsertSql(select, varying, count)
  )
}

function makeSharedInsertSql(select: string[], varying: number, count: number) {
  const tuple = `(${Array.from({ length: varying }, () => '?').join(', ')})`
  const columns = ENTRY_COLUMNS.slice(0, select.length)
  return (
    `INSERT INTO ${quoteId(HISTORY_TABLE)} (${columns.map(quoteId).join(', ')}) ` +
    `SELECT ${select.join(', ')} FROM (VALUES ${Array.from({ length: count }, () => tuple).join(', ')})`
  )
}

/** The plain insert of `count` entries (every value bound per entry). */
function plainInsertSql(count: number, withIds: boolean) {
  return memoized(`${count}\u0000${withIds}`, () =>
    insertSql(HISTORY_TABLE, ENTRY_COLUMNS.slice(0, withIds ? 17 : 16), count)
  )
}

/**
 * SQL texts made once (a 1,000-entry INSERT is ~40 KB: native_sql's prepared statement cache
 * hashes and compares a new string of that length on every call, the same string object at once).
 */
const sqlTexts = new Map<string, string>()
function memoized(key: string, make: () => string): string {
  let text = sqlTexts.get(key)
  if (text === undefined) {
    text = make()
    if (sqlTexts.size >= 100) sqlTexts.clear()
    sqlTexts.set(key, text)
  }
  return text
}
