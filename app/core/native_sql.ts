import Database from 'better-sqlite3'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'

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

export const isMysql = () => db.connection().dialect.name === 'mysql'

/** better-sqlite3 binds no booleans or undefined. */
const bindable = (value: unknown) =>
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

async function run(connection: any, sql: string, bindings: unknown[]): Promise<any> {
  const values = bindings.map(bindable)
  if (!isMysql()) {
    const statement = sqliteStatement(connection, sql)
    return statement.reader ? statement.all(...values) : statement.run(...values)
  }
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
 */
interface SqliteReader {
  client: unknown
  connection: Database.Database
  dataVersion: Database.Statement
  /**
   * Results of readCached by statement, then by bindings, valid while the database's
   * data_version is `version`; `size` counts them. Keyed by the statement's own text rather than
   * text and bindings joined: the session statement is 1.5 KB, and a new key of that length made
   * and hashed on every call was a measurable share of a small api.php call.
   */
  results: Map<string, Map<string, Row[]>>
  size: number
  version: number
}

let sqliteReader: SqliteReader | null = null

function sqliteReaderFor(knex: any): SqliteReader {
  const current = sqliteReader
  if (current && current.client === knex) return current
  current?.connection.close()
  const connection = new Database(knex.client.config.connection.filename)
  connection.pragma('busy_timeout = 5000')
  connection.pragma('foreign_keys = ON')
  const dataVersion = connection.prepare('PRAGMA data_version').pluck()
  sqliteReader = {
    client: knex,
    connection,
    dataVersion,
    results: new Map(),
    size: 0,
    version: -1,
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
  const knex: any = db.connection().getReadClient()
  if (!isMysql()) return run(sqliteReaderFor(knex).connection, sql, bindings)
  return runPooled(knex, sql, bindings)
}

/**
 * readQuery for the reads nearly every request repeats (its session and user,
 * the book it names). On SQLite, results are kept until any connection — this
 * process's writer or another process — commits a change: SQLite's
 * data_version tells, for the price of a trivial statement, so a cached result
 * is never older than the last commit. Callers must not modify the rows.
 * On MySQL this is readQuery (another server may write at any time).
 */
export async function readCached(sql: string, bindings: unknown[] = []): Promise<Row[]> {
  if (isMysql()) return readQuery(sql, bindings)
  const reader = sqliteReaderFor(db.connection().getReadClient())
  const version = reader.dataVersion.get() as number
  if (version !== reader.version || reader.size >= MAX_CACHED_RESULTS) {
    reader.results.clear()
    reader.size = 0
    reader.version = version
  }
  let byBindings = reader.results.get(sql)
  if (!byBindings) {
    byBindings = new Map()
    reader.results.set(sql, byBindings)
  }
  const key = JSON.stringify(bindings)
  const cached = byBindings.get(key)
  if (cached) return cached
  const rows: Row[] = await run(reader.connection, sql, bindings)
  // Another call may have cleared the results meanwhile (a newer data_version): kept only if not.
  if (reader.version === version) {
    byBindings.set(key, rows)
    reader.size++
  }
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
  const connection = sqliteReaderFor(db.connection().getReadClient()).connection
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
