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

const isMysql = () => db.connection().dialect.name === 'mysql'

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
 * SQLite reads outside transactions use a connection of their own. knex gives
 * SQLite a pool of one connection, so a read would otherwise wait for every
 * write transaction in progress (and pay the pool's bookkeeping); in WAL mode
 * a second connection reads the last committed state without waiting. It is
 * tied to the knex client: when Lucid reconnects (tests recreate the file),
 * a new one is opened on the new file.
 */
let sqliteReader: { client: unknown; connection: Database.Database } | null = null

function sqliteReaderFor(knex: any): Database.Database {
  const current = sqliteReader
  if (current && current.client === knex) return current.connection
  current?.connection.close()
  const connection = new Database(knex.client.config.connection.filename)
  connection.pragma('busy_timeout = 5000')
  connection.pragma('foreign_keys = ON')
  sqliteReader = { client: knex, connection }
  return connection
}

/** Runs a read outside any transaction (or in `client` when it is a transaction). */
export async function readQuery(
  sql: string,
  bindings: unknown[] = [],
  client?: QueryClientContract
): Promise<Row[]> {
  if (client && client.isTransaction)
    return trxQuery(client as TransactionClientContract, sql, bindings)
  const knex: any = db.connection().getReadClient()
  if (!isMysql()) return run(sqliteReaderFor(knex), sql, bindings)
  const connection = await knex.client.acquireConnection()
  try {
    return await run(connection, sql, bindings)
  } finally {
    await knex.client.releaseConnection(connection)
  }
}

/** Quotes an identifier Quire built (table and column names are generated, never client text). */
export const quoteId = (identifier: string) => (isMysql() ? `\`${identifier}\`` : `"${identifier}"`)
