import Database from 'better-sqlite3'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { EPOCHS_TABLE } from '#core/read_cache_epochs'

type Row = Record<string, any>

/**
 * Statements on the driver connection itself (better-sqlite3 or mysql2), for
 * the hot paths: a page read and a one-cell write. Going through Lucid and
 * knex costs about 0.4 ms of JavaScript per statement (query building,
 * compiling, events), several times the statement itself; a page read or an
 * updateTableValue then spent most of its time there. SQLite statements are
 * prepared once per connection and SQL text; mysql2 escapes bindings itself.
 *
 * Only SQL written by Quire's own code, with `?` bindings, goes through here:
 * the per-request authentication, a page of messages or rows, a cell write.
 */
const prepared = new WeakMap<object, Map<string, any>>()

/**
 * Lucid's primary connection (its knex clients: `client` writes, `readClient` reads), connected
 * on first use. `db.connection()` makes a query client and a dialect object on every call, which
 * the statements of this module paid several times each (isMysql, readQuery, readCached); a
 * lookup in the connection manager answers the same clients. The manager's entry is read each
 * time: when Lucid reconnects (tests recreate the SQLite file), it holds the new clients.
 */
function primary(): any {
  const name = db.primaryConnectionName
  const connection = db.manager.get(name)?.connection
  if (connection?.client) return connection
  db.manager.connect(name)
  return db.manager.get(name)!.connection
}

/** The primary connection's dialect, resolved once per connection object. */
let dialectOf: { connection: object; mysql: boolean } | null = null

export const isMysql = () => {
  const connection = primary()
  let known = dialectOf
  if (!known || known.connection !== connection) {
    known = { connection, mysql: db.connection().dialect.name === 'mysql' }
    dialectOf = known
  }
  return known.mysql
}

/** better-sqlite3 binds no booleans or undefined. */
export const bindable = (value: unknown) =>
  typeof value === 'boolean' ? (value ? 1 : 0) : value === undefined ? null : value

function sqliteStatement(connection: any, sql: string) {
  let cache = prepared.get(connection)
  if (!cache) {
    cache = new Map()
    prepared.set(connection, cache)
  }
  let statement = cache.get(sql)
  if (!statement) {
    statement = connection.prepare(sql)
    if (cache.size > 500) cache.clear()
    cache.set(sql, statement)
  }
  return statement
}

/** A statement on a better-sqlite3 connection, which answers at once. */
function runSqlite(connection: any, sql: string, bindings: unknown[]): any {
  // A statement of this process's own writing (trxQuery, writeQuery, nativeTransaction).
  if (connection !== sqliteReader?.connection) versionChecked = false
  const statement = sqliteStatement(connection, sql)
  const values = bindings.map(bindable)
  return statement.reader ? statement.all(...values) : statement.run(...values)
}

async function run(connection: any, sql: string, bindings: unknown[]): Promise<any> {
  if (!isMysql()) return runSqlite(connection, sql, bindings)
  const values = bindings.map(bindable)
  return new Promise((resolve, reject) =>
    connection.query(sql, values, (error: Error | null, result: any) =>
      error ? reject(error) : resolve(result)
    )
  )
}

/** Runs a statement in a write transaction (the connection the transaction holds). */
export async function trxQuery(
  trx: TransactionClientContract,
  sql: string,
  bindings: unknown[] = []
): Promise<any> {
  const knexTrx: any = trx.getWriteClient()
  const connection = await knexTrx.client.acquireConnection()
  return run(connection, sql, bindings)
}

/**
 * Runs a write statement in `client`: the transaction's connection, or, when
 * `client` is no transaction, a pooled write connection where the statement
 * commits on its own (StampService.writeStatement).
 */
export async function writeQuery(
  client: QueryClientContract,
  sql: string,
  bindings: unknown[] = []
): Promise<any> {
  if (client.isTransaction) return trxQuery(client as TransactionClientContract, sql, bindings)
  return runPooled(client.getWriteClient(), sql, bindings)
}

/**
 * A write transaction on one connection of the write pool, begun and ended by plain statements
 * on the driver (BEGIN IMMEDIATE on SQLite: the write lock is taken at once, so a read made in
 * it is never invalidated by another writer; START TRANSACTION on MySQL). knex's own
 * transaction runs BEGIN and COMMIT through its query builder, about as much JavaScript as the
 * hot writes themselves (CellWriter's one-cell write with cell history, under --cpu-prof).
 * `work` gets a transaction client for trxQuery, readQuery and writeQuery (the statements of
 * this module) and its dialect; it has no query builder. Rolled back when `work` throws.
 */
export async function nativeTransaction<T>(
  work: (trx: TransactionClientContract) => Promise<T>
): Promise<T> {
  const connection = db.connection()
  const knex: any = connection.getWriteClient()
  const driver = await knex.client.acquireConnection()
  const trx = {
    isTransaction: true,
    dialect: connection.dialect,
    getWriteClient: () => ({ client: { acquireConnection: async () => driver } }),
  } as unknown as TransactionClientContract
  try {
    await run(driver, isMysql() ? 'START TRANSACTION' : 'BEGIN IMMEDIATE', [])
    let result: T
    try {
      result = await work(trx)
      await run(driver, 'COMMIT', [])
    } catch (error) {
      await run(driver, 'ROLLBACK', []).catch(() => {})
      throw error
    }
    return result
  } finally {
    await knex.client.releaseConnection(driver)
  }
}

/** Runs a statement on a connection borrowed from a knex pool for just that statement. */
async function runPooled(knex: any, sql: string, bindings: unknown[]): Promise<any> {
  const connection = await knex.client.acquireConnection()
  try {
    return await run(connection, sql, bindings)
  } finally {
    await knex.client.releaseConnection(connection)
  }
}

/**
 * SQLite reads outside transactions use a connection of their own. knex gives
 * SQLite a pool of one connection, so a read would otherwise wait for every
 * write transaction in progress (and pay the pool's bookkeeping); in WAL mode
 * a second connection reads the last committed state without waiting. It is
 * tied to the knex client: when Lucid reconnects (tests recreate the file),
 * a new one is opened on the new file.
 *
 * Its page cache is larger than SQLite's default 2 MB and the file is memory-mapped: a scan of a
 * large table (an ad hoc count or contains filter over a million rows) then reads pages from the
 * OS's cache without copying them through SQLite's, and the hot pages of the pages and lookups
 * stay in the connection's own cache. Temporary b-trees (ORDER BY / DISTINCT without an index)
 * are kept in memory. Measured at 1,000,000 rows (bench/first_page_cpu.ts, alternating builds,
 * load 9-11): server CPU per ad hoc count (an unindexed number, issue 23 item 4) 112 -> 89 ms; the
 * statement alone 113 -> 91 ms, a LIKE '%...%' scan of a text column 193 -> 184 ms; a first page
 * unchanged (1.9 ms of server CPU, about 0.5 ms of it the statement).
 */
interface SqliteReader {
  client: unknown
  connection: Database.Database
  dataVersion: Database.Statement
  schemaVersion: Database.Statement
  /** The epochs' statement and the tables they count for (read_cache_epochs.ts); null without them. */
  epochsSource: { statement: Database.Statement; tracked: Set<string> } | null
  /**
   * readCached's results by statement (its own text, not text and bindings joined: the session
   * statement is 1.5 KB, and a new key of that length made and hashed on every call was a
   * measurable share of a small api.php call), then by bindings; `size` counts them.
   */
  results: Map<string, CachedStatement>
  size: number
  /** The data_version and schema_version the results were last checked against. */
  version: number
  schema: number
  /** Epochs of the tracked tables, as of `version`. */
  epochs: Map<string, number>
}

interface CachedStatement {
  /** The tables the statement reads, all with epochs; null: dropped at any commit. */
  tables: string[] | null
  byBindings: Map<string, Row[]>
}

let sqliteReader: SqliteReader | null = null

/**
 * Whether readCached has read the data_version in the current callback of the event loop (the
 * I/O event, timer or immediate being handled, and the promise reactions and ticks that follow
 * it) with no statement of this process run since. Reading it takes SQLite's shared-memory read
 * lock and its release (two fcntl calls, about 2 µs of system time each on this machine):
 * getUserInfo made two such reads per call, the session's and the books count's.
 *
 * Why once per callback is enough: every request served in a callback arrived (its bytes were
 * read by Node) before that callback began, so a commit of another process that readCached does
 * not see is one that came after the check, later than the request's arrival: the request is
 * answered as of a moment between its arrival and its answer, as before. Commits of this process
 * are seen at once: every statement it runs on SQLite goes through knex, whose 'query' event
 * is emitted just before the statement runs (synchronously, better-sqlite3), or through `run`
 * here; both clear the flag (markOwnStatement), so a request that writes and then reads its
 * own write reads it.
 */
let versionChecked = false
const versionCheckEnds = () => {
  versionChecked = false
}
const markOwnStatement = () => {
  versionChecked = false
}
const watchedClients = new WeakSet<object>()

/** Clears versionChecked at every statement knex runs for `knex` (a Lucid connection's client). */
function watchStatements(knex: any) {
  const client = knex?.client
  if (!client || watchedClients.has(client)) return
  watchedClients.add(client)
  client.on('query', markOwnStatement)
}

/** Read connections' page cache (KiB, negative for SQLite) and memory map (bytes). */
const READER_CACHE_KIB = 64 * 1024
const READER_MMAP_BYTES = 1024 * 1024 * 1024

function sqliteReaderFor(knex: any): SqliteReader {
  const current = sqliteReader
  if (current && current.client === knex) return current
  current?.connection.close()
  watchStatements(knex)
  watchStatements(primary().client)
  const connection = new Database(knex.client.config.connection.filename)
  connection.pragma('busy_timeout = 5000')
  connection.pragma('foreign_keys = ON')
  connection.pragma(`cache_size = -${READER_CACHE_KIB}`)
  connection.pragma(`mmap_size = ${READER_MMAP_BYTES}`)
  connection.pragma('temp_store = MEMORY')
  versionChecked = false
  sqliteReader = {
    client: knex,
    connection,
    dataVersion: connection.prepare('PRAGMA data_version').pluck(),
    schemaVersion: connection.prepare('PRAGMA schema_version').pluck(),
    epochsSource: null,
    results: new Map(),
    size: 0,
    version: -1,
    schema: -1,
    epochs: new Map(),
  }
  return sqliteReader
}

const MAX_CACHED_RESULTS = 20_000

/** Runs a read outside any transaction (or in `client` when it is a transaction). */
export async function readQuery(
  sql: string,
  bindings: unknown[] = [],
  client?: QueryClientContract
): Promise<Row[]> {
  if (client && client.isTransaction)
    return trxQuery(client as TransactionClientContract, sql, bindings)
  const knex: any = primary().readClient
  if (!isMysql()) return run(sqliteReaderFor(knex).connection, sql, bindings)
  return runPooled(knex, sql, bindings)
}

/**
 * SELECT of the epochs; null without the epochs table (a database not migrated yet). `tracked`:
 * the tables with an epoch whose three triggers are in place, as of this schema (a table rebuilt
 * by a later migration, as SQLite's ALTER through a copy does, loses its triggers: untracked).
 */
function epochsOf(connection: Database.Database) {
  try {
    const tracked = new Set(
      connection
        .prepare(
          `SELECT e.table_name FROM ${EPOCHS_TABLE} e WHERE (SELECT COUNT(*) FROM sqlite_master m
           WHERE m.type = 'trigger' AND m.tbl_name = e.table_name AND m.name LIKE e.table_name || '_read_cache_%') = 3`
        )
        .pluck()
        .all() as string[]
    )
    const statement = connection.prepare(`SELECT table_name, epoch FROM ${EPOCHS_TABLE}`).raw(true)
    return { statement, tracked }
  } catch {
    return null
  }
}

function readEpochs(reader: SqliteReader) {
  const epochs = new Map<string, number>()
  const source = reader.epochsSource
  if (source)
    for (const [table, epoch] of source.statement.all() as [string, number][])
      if (source.tracked.has(table)) epochs.set(table, epoch)
  return epochs
}

const TABLE_REFERENCE = /\b(?:from|join)\s+([`"]?)([A-Za-z_][A-Za-z0-9_]*)\1/gi

/** The tables `sql` reads when all have epochs; null otherwise. */
function trackedTablesOf(sql: string, epochs: Map<string, number>): string[] | null {
  const tables = new Set<string>()
  for (const match of sql.matchAll(TABLE_REFERENCE)) {
    if (!epochs.has(match[2])) return null
    tables.add(match[2])
  }
  return tables.size ? [...tables] : null
}

function dropResults(reader: SqliteReader, entry: CachedStatement) {
  reader.size -= entry.byBindings.size
  entry.byBindings.clear()
}

/**
 * Called when the data_version changed (a commit by another connection, this process's writer
 * included): drops the results of the statements whose tables' epochs moved, or that read a
 * table without one. A schema change drops them all and reads again which tables have epochs.
 */
function revalidate(reader: SqliteReader) {
  const schema = reader.schemaVersion.get() as number
  if (schema !== reader.schema) {
    reader.schema = schema
    reader.epochsSource = epochsOf(reader.connection)
    reader.epochs = readEpochs(reader)
    reader.results.clear()
    reader.size = 0
    return
  }
  const epochs = readEpochs(reader)
  const before = reader.epochs
  for (const entry of reader.results.values()) {
    if (entry.byBindings.size === 0) continue
    if (!entry.tables || entry.tables.some((table) => epochs.get(table) !== before.get(table)))
      dropResults(reader, entry)
  }
  reader.epochs = epochs
}

/**
 * readCached's key of a statement's bindings: their JSON text, or a lone text binding itself (the
 * session's key digest) unless it begins as JSON text of an array would ('[').
 */
function bindingsKey(bindings: unknown[]): string {
  const [only] = bindings
  if (bindings.length === 1 && typeof only === 'string' && only.charCodeAt(0) !== 91) return only
  return JSON.stringify(bindings)
}

/**
 * readQuery for the reads nearly every request repeats (its session and user,
 * the book it names, a category's head). On SQLite, a result is kept until a
 * commit — of any connection, this process's writer or another process — writes
 * one of the tables its statement reads: SQLite's data_version tells that some
 * connection committed, for the price of a trivial statement, and then the
 * tables' epochs (bumped by triggers, app/core/read_cache_epochs.ts) tell which.
 * A statement reading a table without an epoch is dropped at any commit. So a
 * cached result is never older than the last commit of its tables; a revoked
 * session is refused at once everywhere. Callers must not modify the rows.
 * On MySQL this is readQuery (another server may write at any time).
 */
export async function readCached(sql: string, bindings: unknown[] = []): Promise<Row[]> {
  return readCachedNow(sql, bindings) ?? readQuery(sql, bindings)
}

/**
 * readCached's rows without a promise where none is needed: on SQLite (better-sqlite3 answers at
 * once), the rows; on MySQL null (readCached asks the server). For the reads of every request:
 * each async layer a call goes through costs a promise and turns of the microtask queue, which
 * under load were a sixth of a getUserInfo's server time.
 */
export function readCachedNow(sql: string, bindings: unknown[] = []): Row[] | null {
  if (isMysql()) return null
  const reader = sqliteReaderFor(primary().readClient)
  if (!versionChecked) {
    const version = reader.dataVersion.get() as number
    if (version !== reader.version) {
      revalidate(reader)
      reader.version = version
    }
    versionChecked = true
    // Ticks run once the promise reactions of the current callback are done: before any
    // other I/O event, timer or immediate is handled.
    process.nextTick(versionCheckEnds)
  }
  if (reader.size >= MAX_CACHED_RESULTS) {
    for (const entry of reader.results.values()) dropResults(reader, entry)
    reader.size = 0
  }
  let entry = reader.results.get(sql)
  if (!entry) {
    entry = { tables: trackedTablesOf(sql, reader.epochs), byBindings: new Map() }
    reader.results.set(sql, entry)
  }
  const key = bindingsKey(bindings)
  const cached = entry.byBindings.get(key)
  if (cached) return cached
  const rows: Row[] = runSqlite(reader.connection, sql, bindings)
  entry.byBindings.set(key, rows)
  reader.size++
  return rows
}

/** A statement read in raw mode (arrays) and made into rows here: readMany. */
interface ManyStatement {
  statement: Database.Statement
  /** The column names of the rows, as of schema `version`; null until a read has named them. */
  columns: string[] | null
  version: number
}
const manyStatements = new WeakMap<Database.Database, Map<string, ManyStatement>>()
const schemaVersions = new WeakMap<Database.Database, Database.Statement>()

/**
 * readQuery for reads of many rows of many columns (a page of a table). better-sqlite3 names
 * each column of each row as it makes the row's object, which costs about as much as the
 * statement itself on a 100-row page of 20 columns; read as arrays (raw mode) and named here
 * with the column list kept per statement, the same rows cost about half. The list is the
 * statement's as of the schema version read before and after the read: a schema change in
 * between (another connection or process adding a column: `t.*` then names other columns)
 * makes that read go through better-sqlite3's own naming, which refreshes the list.
 */
export async function readMany(sql: string, bindings: unknown[] = []): Promise<Row[]> {
  if (isMysql()) return readQuery(sql, bindings)
  const connection = sqliteReaderFor(primary().readClient).connection
  let statements = manyStatements.get(connection)
  let schemaVersion = schemaVersions.get(connection)
  if (!statements || !schemaVersion) {
    statements = new Map()
    manyStatements.set(connection, statements)
    schemaVersion = connection.prepare('PRAGMA schema_version').pluck()
    schemaVersions.set(connection, schemaVersion)
  }
  let entry = statements.get(sql)
  if (!entry) {
    if (statements.size > 500) statements.clear()
    entry = { statement: connection.prepare(sql), columns: null, version: -1 }
    statements.set(sql, entry)
  }
  const values = bindings.map(bindable)
  const version = schemaVersion.get() as number
  const columns = entry.columns
  if (columns && entry.version === version) {
    const raw = entry.statement.raw(true).all(...values) as unknown[][]
    if (schemaVersion.get() === version) {
      return raw.map((cells) => {
        const row: Row = {}
        for (let c = 0; c < columns.length; c++) row[columns[c]] = cells[c]
        return row
      })
    }
  }
  const rows = entry.statement.raw(false).all(...values) as Row[]
  const names = entry.statement.columns().map((column) => column.name)
  // A name that assignment would not store as an own property keeps the statement in object mode.
  const plain = names.every((name) => name !== '__proto__')
  if (schemaVersion.get() === version && plain) {
    entry.columns = names
    entry.version = version
  } else entry.columns = null
  return rows
}

/** Quotes an identifier Quire built (table and column names are generated, never client text). */
export const quoteId = (identifier: string) => (isMysql() ? `\`${identifier}\`` : `"${identifier}"`)
