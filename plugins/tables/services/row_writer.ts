import { inject } from '@adonisjs/core'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { quoteId, trxQuery } from '#core/native_sql'
import { StampService } from '#core/services/stamp_service'
import { OutboxService } from '#core/outbox/outbox_service'
import {
  COMPUTED_TYPES,
  convertInput,
  hasSideTable,
  rowTableName,
  serializeCell,
  sideTableName,
  type FieldDef,
} from '../lib/field_types.js'
import { bindingsOf, chunks, insertSql, isTmp, nowText, type Row } from '../lib/row_sql.js'
import type { RowsChanged } from '../events.js'
import { changeOf, changesOfFields, fieldsOfColumns, publishRowChanges } from './row_changes.js'
import { HistoryService } from './history_service.js'
import { ComputedFields } from './computed_fields.js'
import { FieldEncryption, type UnlockedFields } from './field_encryption.js'
import type { CategoryMeta } from './meta_service.js'
import { RecomputeService } from './recompute_service.js'
import { categoryOfRowId } from './schema_service.js'
import { TableAccess } from './table_access.js'

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
  /** The operation recorded in the cells' history (default: from source). */
  operation?: string
  /** The encrypted fields the request unlocked (FieldEncryption.unlock); writing another is refused. */
  unlocked?: UnlockedFields
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

/** A row of a write, validated and converted before the transaction starts. */
interface PreparedRow {
  key: string
  id: number | null
  columns: Row
  lists: Map<FieldDef, (string | number)[]>
}

/**
 * Row writes (createOrUpdateTableRow(s), and cells the CellWriter does not
 * take): validation and conversion per field type, computed columns, side
 * tables of multi-valued fields, inserts with `ord = id`, in one stamped
 * transaction; `tables:rows_changed` is emitted after commit and rows of
 * other tables that show the written ones are recomputed by a job.
 */
@inject()
export class RowWriter {
  /** Row table -> the id its next insert is expected to get (see the inserts in `write`). */
  private nextIds = new Map<string, number>()

  constructor(
    private stamps: StampService,
    private access: TableAccess,
    private computed: ComputedFields,
    private recompute: RecomputeService,
    private outbox: OutboxService,
    private history: HistoryService,
    private encryption: FieldEncryption
  ) {}

  async write(actor: Actor, writes: RowWrite[], options: WriteOptions): Promise<WriteResult> {
    const categoryId = options.categoryId || (await this.inferCategory(writes))
    const scope = await this.access.forCategory(actor, categoryId, 'write', options.b_o)
    const { category } = scope
    // Validate and convert everything before touching the database: a bad value writes nothing.
    const prepared = this.prepare(category, writes, options.linkSeparator || ',')
    // Whether the outbox (webhooks) wants this write: then old values are read locked and staged.
    const staged = this.outbox.wants('tables:rows_changed', {
      ...changeOf(scope, actor, options),
      stamp: 0,
    })

    const result = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      // Linked rows and users must exist (checked first: a bad value writes nothing). In the
      // transaction, on its connection: the linked rows read are those computeRows shows, and
      // SQLite's reading connection re-read their pages after every commit of any writer.
      const linked = await this.checkLinks(
        trx,
        category,
        prepared.flatMap((row) => [...row.lists.entries()])
      )
      await this.checkUsers(trx, category, prepared)
      const at = nowText()
      const by = actor.user.code
      const table = rowTableName(category.id)

      // Existing rows: load, merge.
      const existingIds = prepared.filter((row) => row.id !== null).map((row) => row.id!)
      const current = new Map<number, Row>()
      // Locked when staged or recorded: a concurrent write of the row then waits, and its old values are ours.
      const lock = (staged || this.history.enabled()) && trx.dialect.name === 'mysql'
      for (const part of chunks([...new Set(existingIds)])) {
        const rows = await trxQuery(
          trx,
          `SELECT * FROM ${quoteId(table)} WHERE id IN (${part.map(() => '?').join(', ')})${lock ? ' FOR UPDATE' : ''}`,
          part
        )
        for (const row of rows) current.set(Number(row.id), row)
      }
      for (const id of existingIds)
        if (!current.has(id)) throw rpcError('NOT_FOUND', `Row ${id} not found`)

      // Each state is built by plain property stores: object spread copying into a literal that
      // already has properties runs V8's generic copy (bench:tables bulk, --cpu-prof: the
      // spreads here were the write's costliest JavaScript line, ~3 µs a row).
      const states: { prepared: PreparedRow; state: Row; isNew: boolean }[] = prepared.map(
        (row) => {
          const state: Row =
            row.id !== null
              ? assignInto({}, current.get(row.id)!)
              : { id: undefined, ord: 0, created_at: at, created_by: by }
          assignInto(state, row.columns)
          state.updated_at = at
          state.updated_by = by
          state.sstamp = stamp
          return { prepared: row, state, isNew: row.id === null }
        }
      )
      // Encrypted fields: sealed here, so no plaintext reaches the table (new rows' after insert).
      const sealing = this.encryption.sealWrite(category, states, options.unlocked)
      await this.assignAutoincrements(
        trx,
        category,
        states.filter((entry) => entry.isNew).map((entry) => entry.state)
      )
      // Link captions, lookups and rollups of existing rows change only when their links do (or through propagation).
      const linkColumns = new Set(
        category.fields.filter((field) => field.type === 'link').map((field) => field.column)
      )
      const linksChanged = states.some(
        (entry) =>
          entry.isNew ||
          Object.keys(entry.prepared.columns).some((column) => linkColumns.has(column))
      )
      await this.computed.computeRows(
        trx,
        category,
        states.map((entry) => entry.state),
        linksChanged,
        linked
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
        const payload = part.map((entry) => this.computed.columnsOf(category, entry.state))
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
      await sealing.sealInserted(trx)
      // Updates: one native statement per row (the same SQL text for every row of the table: one
      // prepared statement on SQLite); knex's query builder cost ~0.4 ms of JavaScript per row
      // (a rollBackBeforeChange of 1,000 rows spent most of its time there).
      for (const entry of states.filter((candidate) => !candidate.isNew)) {
        const columns = this.computed.columnsOf(category, entry.state)
        const names = Object.keys(columns)
        await trxQuery(
          trx,
          `UPDATE ${quoteId(table)} SET ${names.map((name) => `${quoteId(name)} = ?`).join(', ')} WHERE id = ?`,
          [...bindingsOf([columns], names), entry.state.id]
        )
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
      const changedFields = new Set<string>()
      for (const row of prepared)
        for (const column of Object.keys(row.columns)) changedFields.add(column)
      await this.recompute.scheduleDependents(
        trx,
        category,
        touched.filter((_, index) => !states[index].isNew),
        changedFields,
        actor.user.id,
        afterCommit
      )

      // Cell history and the outbox (same transaction): the old and new values of the fields each row was given.
      const wanted = staged || this.history.enabled()
      const changes = (wanted ? states : []).map((entry) => {
        const columns = Object.keys(entry.prepared.columns)
        for (const field of entry.prepared.lists.keys()) columns.push(field.column!)
        return {
          id: Number(entry.state.id),
          action: entry.isNew ? ('create' as const) : ('update' as const),
          fields: changesOfFields(
            fieldsOfColumns(category, columns),
            entry.isNew ? null : current.get(Number(entry.state.id))!,
            entry.state
          ),
        }
      })
      const event: RowsChanged = {
        ...changeOf(scope, actor, options),
        created: inserted.map((entry) => Number(entry.state.id)),
        modified: states.filter((entry) => !entry.isNew).map((entry) => Number(entry.state.id)),
        fieldIds: [...keysOf(writes.map((write) => write.values))].map(Number),
        stamp,
      }
      await publishRowChanges(
        { history: this.history, outbox: this.outbox },
        { trx, afterCommit },
        { actor, options, category, event, changes, staged }
      )
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
      // Serialized on demand: only createOrUpdateTableRow answers them (README.md, "Figures behind the settings").
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
        sqlText(table, columns, slice.length),
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
      await trxQuery(trx, sqlText(table, columns, slice.length), bindingsOf(slice, columns))
    }
  }

  /** The table of a write without catId: of its first field named, else of its first server row id. */
  private async inferCategory(writes: RowWrite[]): Promise<number> {
    for (const write of writes) {
      const fieldId = Object.keys(write.values)[0]
      if (fieldId) return this.access.inferCategory({ fieldId })
      if (!isTmp(write.key)) return this.access.inferCategory({ rowId: write.key })
    }
    throw rpcError('MISSING_PARAMETER', 'Missing parameter: catId (or fieldValues naming a field)')
  }

  /** Validates row ids and converts every value to its stored form (no database access). */
  private prepare(category: CategoryMeta, writes: RowWrite[], separator: string): PreparedRow[] {
    const fieldsById = new Map(category.fields.map((field) => [String(field.id), field]))
    const prepared: PreparedRow[] = []
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
    return prepared
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

  /**
   * Every linked row must exist in the linked table (one query per link field and 1,000 ids).
   * Answers the rows read (the columns computeRows shows: ComputedFields.readLinked), by linked
   * table: computeRows shows them without reading again.
   */
  private async checkLinks(
    trx: TransactionClientContract,
    category: CategoryMeta,
    entries: [FieldDef, (string | number)[]][]
  ): Promise<Map<number, Map<number, Row>>> {
    const byField = new Map<FieldDef, Set<number>>()
    for (const [field, list] of entries) {
      if (field.type !== 'link') continue
      const set = byField.get(field) ?? new Set<number>()
      for (const id of list) set.add(Number(id))
      byField.set(field, set)
    }
    const linked = new Map<number, Map<number, Row>>()
    for (const [field, ids] of byField) {
      if (ids.size === 0) continue
      const target = field.options.linkCatId
      if (!target) throw rpcError('INVALID_PARAMETER', `Field "${field.name}" links to no table`)
      const found = linked.get(target) ?? new Map<number, Row>()
      linked.set(target, found)
      await this.computed.readLinked(
        trx,
        category,
        target,
        [...ids].filter((id) => !found.has(id)),
        found
      )
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
    return linked
  }

  /** A user field holds the code of an existing user (read in the write's transaction, as UserService.idsOfCodes reads). */
  private async checkUsers(
    trx: TransactionClientContract,
    category: CategoryMeta,
    prepared: { columns: Row }[]
  ) {
    for (const field of category.fields) {
      if (field.type !== 'user' || !field.column) continue
      const codes = new Set<string>(
        prepared
          .map((row) => row.columns[field.column!])
          .filter((code) => typeof code === 'string' && code !== '')
      )
      if (codes.size === 0) continue
      const known = new Set<string>()
      for (const part of chunks([...codes], 1000)) {
        const rows = await trxQuery(
          trx,
          `SELECT code FROM users WHERE code IN (${part.map(() => '?').join(', ')})`,
          part
        )
        for (const row of rows) known.add(String(row.code))
      }
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
}

/** Copies `source`'s own enumerable properties into `target` (as object spread would). */
function assignInto(target: Row, source: Row): Row {
  for (const key of Object.keys(source)) target[key] = source[key]
  return target
}

/** The distinct own keys of `objects`, in order of first appearance. */
function keysOf(objects: Row[]): Set<string> {
  const keys = new Set<string>()
  for (const object of objects) for (const key of Object.keys(object)) keys.add(key)
  return keys
}

/**
 * insertSql's text, made once per table, columns and row count: a 1,000-row INSERT's text is
 * tens of KB, and the prepared statement cache (native_sql) hashes and compares a new string
 * of that length on every call, where the same string object is found at once.
 */
const insertTexts = new Map<string, string>()
function sqlText(table: string, columns: string[], count: number): string {
  const key = `${table}\u0000${columns.join('\u0000')}\u0000${count}`
  let text = insertTexts.get(key)
  if (text === undefined) {
    text = insertSql(table, columns, count)
    if (insertTexts.size >= 200) insertTexts.clear()
    insertTexts.set(key, text)
  }
  return text
}
