import { randomBytes } from 'node:crypto'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import env from '#start/env'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { quoteId, readQuery, writeQuery } from '#core/native_sql'
import { COMPUTED_TYPES, activityCellKey, type FieldDef } from '../lib/field_types.js'
import { chunks, insertSql, type Row } from '../lib/row_sql.js'
import { CommentsService, type CommentUsers } from './comments_service.js'
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

/** The columns of an entry, in the order `record` binds them. */
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
]
/** Entries per INSERT: SQLite binds at most 32,766 values a statement. */
const ENTRIES_PER_STATEMENT = 1000

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
      const field = fieldOf(category, change.fieldId)
      if (!field || COMPUTED_TYPES.has(field.type)) continue
      if (action === 'delete' && isEmpty(change.old)) continue
      if (action === 'create' && isEmpty(change.new)) continue
      const oldJson = toJson(change.old)
      const newJson = toJson(change.new)
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
   * Inserts entries in the caller's transaction (one statement per 1,000 entries), their
   * values bound straight from the entries (a bulk write of 10,000 rows records 40,000).
   * On SQLite a value every entry of the statement shares (the write's id, user, stamp, time,
   * the action, often the old value) is bound once for all of them: `INSERT ... SELECT ?, ...,
   * columnN FROM (VALUES ...)`. Each bound value is a conversion in the driver; a bulk write's
   * entries share 10 or 11 of their 15.
   */
  async record(client: QueryClientContract, entries: HistoryEntry[]) {
    if (entries.length === 0 || !this.enabled()) return
    const now = Math.floor(Date.now() / 1000)
    const shareable = client.dialect.name !== 'mysql'
    lastWrite = null
    for (const part of chunks(entries, ENTRIES_PER_STATEMENT)) {
      const first = valuesOf(part[0], now)
      const shared = shareable && part.length > 1 ? sharedColumns(part, first, now) : null
      if (!shared || shared.every(Boolean)) {
        const bindings: unknown[] = []
        for (const entry of part) pushValues(bindings, entry, now, null)
        await writeQuery(client, plainInsertSql(part.length), bindings)
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
      for (const entry of part) pushValues(bindings, entry, now, shared)
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
    }
    if (totals.size === 0) return
    const lastIds = [...totals.values()].map((entry) => entry.last)
    const lasts = new Map<number, Row>()
    for (const part of chunks(lastIds, 1000)) {
      const found = await readQuery(
        `SELECT * FROM ${HISTORY_TABLE} WHERE id IN (${part.map(() => '?').join(', ')})`,
        part
      )
      for (const entry of found) lasts.set(Number(entry.row_id), entry)
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
    const query = () => {
      const q = db.from(HISTORY_TABLE).where('category_id', category.id).where('row_id', rowId)
      if (input.fieldId !== undefined) q.where('field_id', input.fieldId)
      return q
    }
    const counted = await query().count('* as total').first()
    const entries = await query()
      .orderBy('id', 'desc')
      .limit(nbMax)
      .offset((page - 1) * nbMax)
    // Authors and the principals they acted for, in one query.
    const users = await this.comments.users(
      entries.flatMap((entry: Row) => [entry.user_code, entry.principal_code].filter(Boolean))
    )
    return {
      catId: category.id,
      rowId,
      total: Number(counted?.total ?? 0),
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
      const old = db.from(HISTORY_TABLE).where('created_at', '<', before)
      if (edge) old.where('id', '<', edge.id)
      removed += Number(await old.delete())
    }
    if (retention.maxPerTable > 0) {
      const tables = await db
        .from(HISTORY_TABLE)
        .select('category_id')
        .count('* as total')
        .groupBy('category_id')
        .having(db.raw('COUNT(*)') as any, '>', retention.maxPerTable)
      for (const table of tables) {
        const edge = await db
          .from(HISTORY_TABLE)
          .where('category_id', table.category_id)
          .orderBy('id', 'desc')
          .offset(retention.maxPerTable)
          .limit(1)
          .select('id')
          .first()
        if (edge)
          removed += Number(
            await db
              .from(HISTORY_TABLE)
              .where('category_id', table.category_id)
              .where('id', '<=', edge.id)
              .delete()
          )
      }
    }
    return removed
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
function valuesOf(entry: HistoryEntry, now: number): unknown[] {
  const values: unknown[] = []
  pushValues(values, entry, now, null)
  return values
}

/**
 * Appends an entry's values in ENTRY_COLUMNS order to `out`, those whose column is `shared`
 * left out; one array per write for the values the write gives (a bulk write's entries share it).
 */
let lastWrite: HistoryWrite | null = null
let lastWriteValues: unknown[] = []
function pushValues(out: unknown[], entry: HistoryEntry, now: number, shared: boolean[] | null) {
  // Made again when the write changes (entries come write by write), never kept past a call.
  if (entry.write !== lastWrite) {
    lastWrite = entry.write
    lastWriteValues = writeValuesOf(entry.write)
  }
  const fromWrite = lastWriteValues
  const oldJson = entry.oldJson ?? toJson(entry.old)
  const newJson = entry.newJson ?? toJson(entry.new)
  if (!shared) {
    out.push(entry.categoryId, entry.rowId, entry.field.id, entry.field.type, fromWrite[0])
    out.push(entry.action, fromWrite[2], fromWrite[3], fromWrite[4], fromWrite[5], fromWrite[6])
    out.push(fromWrite[7], now, oldJson, newJson)
    return
  }
  if (!shared[0]) out.push(entry.categoryId)
  if (!shared[1]) out.push(entry.rowId)
  if (!shared[2]) out.push(entry.field.id)
  if (!shared[3]) out.push(entry.field.type)
  if (!shared[4]) out.push(fromWrite[0])
  if (!shared[5]) out.push(entry.action)
  for (let column = 6; column <= 11; column++) if (!shared[column]) out.push(fromWrite[column - 4])
  if (!shared[12]) out.push(now)
  if (!shared[13]) out.push(oldJson)
  if (!shared[14]) out.push(newJson)
}

/**
 * Which of ENTRY_COLUMNS hold the same value (`first`'s) in every entry of `part`: the columns
 * given by the write are compared once per distinct write, not once per entry.
 */
function sharedColumns(part: HistoryEntry[], first: unknown[], now: number): boolean[] {
  const shared = first.map(() => true)
  let write = part[0].write
  for (const entry of part) {
    if (shared[0] && entry.categoryId !== first[0]) shared[0] = false
    if (shared[1] && entry.rowId !== first[1]) shared[1] = false
    if (shared[2] && entry.field.id !== first[2]) shared[2] = false
    if (shared[3] && entry.field.type !== first[3]) shared[3] = false
    if (shared[5] && entry.action !== first[5]) shared[5] = false
    if (shared[13] && (entry.oldJson ?? toJson(entry.old)) !== first[13]) shared[13] = false
    if (shared[14] && (entry.newJson ?? toJson(entry.new)) !== first[14]) shared[14] = false
    if (entry.write !== write) {
      write = entry.write
      const values = valuesOf(entry, now)
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
  return (
    `INSERT INTO ${quoteId(HISTORY_TABLE)} (${ENTRY_COLUMNS.map(quoteId).join(', ')}) ` +
    `SELECT ${select.join(', ')} FROM (VALUES ${Array.from({ length: count }, () => tuple).join(', ')})`
  )
}

/** The plain insert of `count` entries (every value bound per entry). */
function plainInsertSql(count: number) {
  return memoized(String(count), () => insertSql(HISTORY_TABLE, ENTRY_COLUMNS, count))
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
