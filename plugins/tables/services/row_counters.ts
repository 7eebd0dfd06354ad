import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import mysql from 'mysql2'
import settings from '#core/settings/main'
import { rpcError } from '#core/rpc/errors'
import {
  bindable,
  isMysql,
  nativeTransaction,
  quoteId,
  readQuery,
  trxQuery,
} from '#core/native_sql'
import { rowTableName, type FieldDef } from '../lib/field_types.js'
import { FilterCompiler, type FilterGroupSpec } from '../lib/filter_compiler.js'

/**
 * Counts kept by triggers, so that a saved view's count and a page deep into a large table read
 * a few thousand small rows instead of every row they pass (README, "Counts kept by triggers").
 *
 * A counter is a predicate over one row table: 0 holds every row; a saved view's counter (its
 * id) holds the rows its filters select. For each bucket of BUCKET_WIDTH `ord` units it knows
 * how many rows of the predicate the bucket holds. Three triggers on the row table keep it (after
 * insert, update, delete), in the writing transaction, for every write path (api.php, socket,
 * console, rollback, import) without their knowing. `ord` is the rows' order (ord, id), and a
 * row is stored with ord = its id, so a bucket holds at most 16,384 rows; a count sums the
 * buckets, and a page at offset N seeks the bucket where the running sum passes N, then skips
 * fewer than a bucket's rows in the (ord, id) index.
 *
 * A counter is made only for a table where it pays: when a count or a page's offset passes the
 * setting tables.countersMinRows (made in the background; the read that found it answers
 * without), and only for a predicate the triggers can evaluate alone: one that reads the row's
 * own columns with literals (no subquery, no function), the same for every user and every day.
 * Its signature (the predicate, as its triggers evaluate it) is checked at every read: a view's
 * changed filters make a new counter; a field's column is dropped with its counters.
 *
 * SQLite: the triggers upsert table_counts. MariaDB: they append to table_count_log, which
 * concurrent writers do without waiting for each other's row locks; reads add the log to the
 * counts and, past FOLD_AT entries, fold it in (a transaction that moves the entries it sees
 * in its snapshot).
 */
/**
 * `ord` units a bucket spans (a power of two: ord / width is exact). A seek's running sum reads
 * every bucket, ~3 µs each on MariaDB (10M rows: 1,024 gave 9,766 buckets and 13-19 ms), and a
 * page then skips up to a bucket's rows in the index, ~55 ns each there. At 10M rows, measured
 * seek / half a bucket's skip: 8,192 2.7-8 / 0.7-1.9 ms, 16,384 1.4-4.2 / 1.0-1.5 ms, 32,768
 * 1.1-2.2 / 3.0-3.4 ms.
 */
export const BUCKET_WIDTH = 16384
/** The counter of every row (pages of the table in its own order). */
export const ALL_ROWS = 0
/** Log entries of one counter past which a read folds them into table_counts. */
const FOLD_AT = 2_000

export interface CounterSpec {
  /** ALL_ROWS, or a saved view's id. */
  counter: number
  /** The view's filters; null for ALL_ROWS. */
  group: FilterGroupSpec | null
}

interface Plan {
  counter: number
  /** The predicate over the row table aliased `t`, literals inlined. */
  predicate: string
  columns: string[]
  signature: string
}

const bucketOf = (row: string) =>
  isMysql()
    ? `TRUNCATE(${row}.ord / ${BUCKET_WIDTH}, 0)`
    : `CAST(${row}.ord / ${BUCKET_WIDTH}.0 AS INTEGER)`

const triggerName = (categoryId: number, counter: number, event: 'ai' | 'ad' | 'au') =>
  `tt_${categoryId}_cnt${counter}_${event}`

/** Words a predicate may hold besides its columns and literals: plain comparisons only. */
const ALLOWED_WORDS = new Set(['AND', 'OR', 'NOT', 'IN', 'IS', 'NULL', 'LIKE', 'ESCAPE'])
const COLUMN = String.raw`\bt\.("(?:[^"]|"")+"|\`(?:[^\`]|\`\`)+\`)`
/** A string literal as the dialect writes it (MariaDB: backslash escapes too, as mysql2 makes them). */
const literal = () => (isMysql() ? String.raw`'(?:[^'\\]|''|\\.)*'` : `'(?:[^']|'')*'`)

/** Calls `onColumn` for each `t.<quoted column>` of `sql` outside its literals; its result replaces it. */
function mapColumns(sql: string, onColumn: (quoted: string) => string) {
  return sql.replace(new RegExp(`${literal()}|${COLUMN}`, 'g'), (token, quoted?: string) =>
    quoted === undefined ? token : onColumn(quoted)
  )
}

/** `sql` with its `?` replaced by the bindings as SQL literals (MariaDB: as mysql2 sends them). */
function inline(sql: string, bindings: unknown[]): string | null {
  if (isMysql()) return mysql.format(sql, bindings.map(bindable) as any[])
  let index = 0
  let failed = false
  const out = sql.replace(new RegExp(`${literal()}|\\?`, 'g'), (token) => {
    if (token !== '?') return token
    const value = sqliteLiteral(bindings[index++])
    if (value === null) failed = true
    return value ?? 'NULL'
  })
  return failed || index !== bindings.length ? null : out
}

function sqliteLiteral(value: unknown): string | null {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'boolean') return value ? '1' : '0'
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null
  if (typeof value === 'bigint') return String(value)
  if (typeof value === 'string') return `'${value.replace(/'/g, "''")}'`
  return null
}

/** Whether `sql` (literals and columns taken out) reads nothing but comparisons. */
function plainComparison(sql: string) {
  const rest = sql.replace(new RegExp(`${literal()}|${COLUMN}`, 'g'), ' ')
  for (const token of rest.split(/[\s(),]+/)) {
    if (token === '' || /^[=<>!]+$/.test(token) || /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(token))
      continue
    if (!ALLOWED_WORDS.has(token.toUpperCase())) return false
  }
  return true
}

const planCache = new WeakMap<FilterGroupSpec, Plan | null>()

/**
 * The counter's predicate, or null when triggers cannot keep it: it reads more than the row
 * (a link's side table, a text index), or it depends on the reader or the day.
 */
export function planCounter(fields: FieldDef[], spec: CounterSpec): Plan | null {
  if (!spec.group) return planOf(spec.counter, '1 = 1')
  if (planCache.has(spec.group)) return planCache.get(spec.group)!
  let result: Plan | null = null
  try {
    const now = new Date()
    const one = new FilterCompiler(fields, { userCode: '\u0001a', now }).compile(spec.group)
    const other = new FilterCompiler(fields, {
      userCode: '\u0001b',
      now: new Date(now.getTime() + 40 * 86_400_000),
    }).compile(spec.group)
    const sql = one.where ? inline(one.where.sql, one.where.bindings) : '1 = 1'
    const otherSql = other.where ? inline(other.where.sql, other.where.bindings) : '1 = 1'
    if (sql !== null && sql === otherSql && plainComparison(sql)) result = planOf(spec.counter, sql)
  } catch {
    result = null // a filter the compiler refuses: the read reports it, no counter
  }
  planCache.set(spec.group, result)
  return result
}

function planOf(counter: number, predicate: string): Plan {
  const columns = new Set<string>(['ord'])
  mapColumns(predicate, (quoted) => {
    columns.add(quoted.slice(1, -1).replace(/""|``/g, (pair) => pair[0]))
    return quoted
  })
  return {
    counter,
    predicate,
    columns: [...columns],
    signature: `${BUCKET_WIDTH}:${predicate}`,
  }
}

/** `(1 when the predicate holds for `row` (NEW or OLD), else 0)`. */
const holds = (predicate: string, row: 'NEW' | 'OLD') =>
  `(CASE WHEN (${mapColumns(predicate, (quoted) => `${row}.${quoted}`)}) THEN 1 ELSE 0 END)`

function triggerStatements(categoryId: number, plan: Plan) {
  const table = quoteId(rowTableName(categoryId))
  const key = `${categoryId}, ${plan.counter}`
  const [pNew, pOld] = [holds(plan.predicate, 'NEW'), holds(plan.predicate, 'OLD')]
  const [bNew, bOld] = [bucketOf('NEW'), bucketOf('OLD')]
  const name = (event: 'ai' | 'ad' | 'au') => quoteId(triggerName(categoryId, plan.counter, event))
  if (isMysql()) {
    // Entries keyed by UUID_SHORT() (migration 033: no AUTO-INC lock held by the writing statement).
    const log = 'INSERT INTO table_count_log (id, category_id, counter, bucket, n)'
    const entry = `UUID_SHORT(), ${key}`
    const minusOld = `SELECT ${entry}, ${bOld}, -1 FROM DUAL WHERE ${pOld} = 1 AND (${pNew} = 0 OR ${bNew} <> ${bOld})`
    const plusNew = `SELECT ${entry}, ${bNew}, 1 FROM DUAL WHERE ${pNew} = 1 AND (${pOld} = 0 OR ${bNew} <> ${bOld})`
    return [
      `CREATE TRIGGER ${name('ai')} AFTER INSERT ON ${table} FOR EACH ROW ${log} SELECT ${entry}, ${bNew}, 1 FROM DUAL WHERE ${pNew} = 1`,
      `CREATE TRIGGER ${name('ad')} AFTER DELETE ON ${table} FOR EACH ROW ${log} SELECT ${entry}, ${bOld}, -1 FROM DUAL WHERE ${pOld} = 1`,
      `CREATE TRIGGER ${name('au')} AFTER UPDATE ON ${table} FOR EACH ROW ${log} ${minusOld} UNION ALL ${plusNew}`,
    ]
  }
  const upsert = (bucket: string, delta: number, where: string) =>
    `INSERT INTO table_counts (category_id, counter, bucket, n) SELECT ${key}, ${bucket}, ${delta} WHERE ${where} ` +
    'ON CONFLICT (category_id, counter, bucket) DO UPDATE SET n = n + excluded.n;'
  const of = plan.columns.map(quoteId).join(', ')
  return [
    `CREATE TRIGGER ${name('ai')} AFTER INSERT ON ${table} BEGIN ${upsert(bNew, 1, `${pNew} = 1`)} END`,
    `CREATE TRIGGER ${name('ad')} AFTER DELETE ON ${table} BEGIN ${upsert(bOld, -1, `${pOld} = 1`)} END`,
    `CREATE TRIGGER ${name('au')} AFTER UPDATE OF ${of} ON ${table} ` +
      `WHEN ${pOld} <> ${pNew} OR ${bOld} <> ${bNew} ` +
      `BEGIN ${upsert(bOld, -1, `${pOld} = 1`)} ${upsert(bNew, 1, `${pNew} = 1`)} END`,
  ]
}

const LOCK_BUSY = Symbol('counter lock busy')

const dropTriggerStatements = (categoryId: number, counter: number) =>
  (['ai', 'ad', 'au'] as const).map(
    (event) => `DROP TRIGGER IF EXISTS ${quoteId(triggerName(categoryId, counter, event))}`
  )

/**
 * Runs `work` holding the counter's lock (MariaDB: a named lock; SQLite: the write lock), or
 * answers `LOCK_BUSY` when another process held it for `waitSeconds`.
 */
async function locked<T>(
  categoryId: number,
  counter: number,
  work: (trx: TransactionClientContract) => Promise<T>,
  waitSeconds = 10
): Promise<T | typeof LOCK_BUSY> {
  if (!isMysql()) return nativeTransaction(work)
  const name = `quire_counter_${categoryId}_${counter}`
  return nativeTransaction(async (trx) => {
    const [row] = await trxQuery(trx, 'SELECT GET_LOCK(?, ?) AS got', [name, waitSeconds])
    if (Number(row?.got) !== 1) return LOCK_BUSY
    try {
      return await work(trx)
    } finally {
      await trxQuery(trx, 'SELECT RELEASE_LOCK(?)', [name])
    }
  })
}

/**
 * Makes (or remakes) a counter: its triggers, then its counts from the rows. On MariaDB the
 * triggers come first (DDL commits on its own) and log every write from then on; the counts
 * are then read in one snapshot together with the log entries that snapshot sees, which are
 * deleted: a write is counted either by the read of the rows or by the log, never both.
 */
async function install(categoryId: number, plan: Plan) {
  const table = quoteId(rowTableName(categoryId))
  const key = [categoryId, plan.counter]
  const countsSql =
    `SELECT ${bucketOf('t')} AS bucket, COUNT(*) AS n FROM ${table} t ` +
    `WHERE ${plan.predicate} GROUP BY ${bucketOf('t')}`
  await locked(categoryId, plan.counter, async (trx) => {
    const [current] = await trxQuery(
      trx,
      'SELECT signature FROM table_counters WHERE category_id = ? AND counter = ?',
      key
    )
    if (current?.signature === plan.signature) return
    await forget(trx, categoryId, plan.counter)
    if (isMysql()) await trxQuery(trx, 'COMMIT')
    for (const statement of triggerStatements(categoryId, plan)) await trxQuery(trx, statement)
    if (isMysql()) {
      // One snapshot for the rows and the log entries already written by the new triggers.
      await trxQuery(trx, 'START TRANSACTION WITH CONSISTENT SNAPSHOT')
      const counts = await trxQuery(trx, countsSql)
      const seen = await trxQuery(
        trx,
        'SELECT id FROM table_count_log WHERE category_id = ? AND counter = ?',
        key
      )
      await insertCounts(trx, categoryId, plan.counter, counts)
      await deleteLogEntries(trx, categoryId, plan.counter, seen)
    } else {
      // SQLite: the triggers and the counts in one write transaction, no writer in between.
      await trxQuery(
        trx,
        `INSERT INTO table_counts (category_id, counter, bucket, n) SELECT ?, ?, bucket, n FROM (${countsSql})`,
        key
      )
    }
    await trxQuery(
      trx,
      'INSERT INTO table_counters (category_id, counter, signature, columns) VALUES (?, ?, ?, ?)',
      [...key, plan.signature, plan.columns.join(',')]
    )
  })
}

async function insertCounts(
  trx: TransactionClientContract,
  categoryId: number,
  counter: number,
  counts: { bucket: unknown; n: unknown }[]
) {
  for (let i = 0; i < counts.length; i += 500) {
    const slice = counts.slice(i, i + 500)
    await trxQuery(
      trx,
      `INSERT INTO table_counts (category_id, counter, bucket, n) VALUES ${slice.map(() => '(?, ?, ?, ?)').join(', ')} ` +
        'ON DUPLICATE KEY UPDATE n = n + VALUES(n)',
      slice.flatMap((row) => [categoryId, counter, Number(row.bucket), Number(row.n)])
    )
  }
}

async function deleteLogEntries(
  trx: TransactionClientContract,
  categoryId: number,
  counter: number,
  entries: { id: unknown }[]
) {
  for (let i = 0; i < entries.length; i += 1000) {
    const slice = entries.slice(i, i + 1000)
    await trxQuery(
      trx,
      `DELETE FROM table_count_log WHERE category_id = ? AND counter = ? AND id IN (${slice.map(() => '?').join(', ')})`,
      [categoryId, counter, ...slice.map((row) => row.id)]
    )
  }
}

/** MariaDB: moves the log entries one snapshot sees into table_counts. */
async function fold(categoryId: number, counter: number) {
  await locked(categoryId, counter, async (trx) => {
    await trxQuery(trx, 'COMMIT')
    await trxQuery(trx, 'START TRANSACTION WITH CONSISTENT SNAPSHOT')
    const seen = await trxQuery(
      trx,
      'SELECT id, bucket, n FROM table_count_log WHERE category_id = ? AND counter = ?',
      [categoryId, counter]
    )
    const sums = new Map<number, number>()
    for (const row of seen)
      sums.set(Number(row.bucket), (sums.get(Number(row.bucket)) ?? 0) + Number(row.n))
    await insertCounts(
      trx,
      categoryId,
      counter,
      [...sums].map(([bucket, n]) => ({ bucket, n }))
    )
    await deleteLogEntries(trx, categoryId, counter, seen)
  })
}

/** Drops a counter's triggers and rows, in `trx` (SQLite) or its own statements (MariaDB DDL). */
async function forget(trx: TransactionClientContract, categoryId: number, counter: number) {
  const key = [categoryId, counter]
  // The signature first: from then on no read trusts the counts (MariaDB commits each step).
  await trxQuery(trx, 'DELETE FROM table_counters WHERE category_id = ? AND counter = ?', key)
  for (const statement of dropTriggerStatements(categoryId, counter)) await trxQuery(trx, statement)
  for (const table of ['table_counts', 'table_count_log'])
    await trxQuery(trx, `DELETE FROM ${table} WHERE category_id = ? AND counter = ?`, key)
}

const pending = new Set<string>()
const folding = new Set<string>()

/** Makes the counter in the background, once per process at a time; failures are logged. */
function installLater(categoryId: number, plan: Plan) {
  const key = `${categoryId}:${plan.counter}`
  if (pending.has(key)) return
  pending.add(key)
  install(categoryId, plan)
    .catch((error) =>
      logger.warn({ err: error, categoryId, counter: plan.counter }, 'row counter not made')
    )
    .finally(() => pending.delete(key))
}

function foldLater(categoryId: number, counter: number) {
  const key = `${categoryId}:${counter}`
  if (folding.has(key)) return
  folding.add(key)
  fold(categoryId, counter)
    .catch((error) => logger.warn({ err: error, categoryId, counter }, 'row counter not folded'))
    .finally(() => folding.delete(key))
}

/** The setting: counters are made for counts and offsets from this many rows; 0 never. */
const minRows = () => settings.integer('tables.countersMinRows')

/** A counter's counts by bucket, its log added on MariaDB (bindings: bucketsBindings). */
function bucketsSql() {
  if (!isMysql()) return 'SELECT bucket, n FROM table_counts WHERE category_id = ? AND counter = ?'
  return (
    'SELECT bucket, SUM(n) AS n FROM (SELECT bucket, n FROM table_counts WHERE category_id = ? AND counter = ? ' +
    'UNION ALL SELECT bucket, n FROM table_count_log WHERE category_id = ? AND counter = ?) u GROUP BY bucket'
  )
}

const bucketsBindings = (categoryId: number, counter: number) =>
  isMysql() ? [categoryId, counter, categoryId, counter] : [categoryId, counter]

/** The statement's signature check: the counter's row, only when it is `signature`. */
const SIGNED =
  'EXISTS (SELECT 1 FROM table_counters c WHERE c.category_id = ? AND c.counter = ? AND c.signature = ?)'

/** A counter's rows in `table` (table_counts, or MariaDB's log). */
const TOTAL_OF = (table: string) =>
  `(SELECT COALESCE(SUM(n), 0) FROM ${table} WHERE category_id = ? AND counter = ?)`

/** MariaDB: how many log entries a counter has, up to FOLD_AT + 1. */
const LOG_SIZE =
  '(SELECT COUNT(*) FROM (SELECT 1 FROM table_count_log WHERE category_id = ? AND counter = ? LIMIT ' +
  `${FOLD_AT + 1}) l)`

/**
 * The rows a counter holds, or null when it has no counter of today's predicate: the caller
 * counts the rows, and hands its figure to `noteCount`.
 */
export async function keptCount(fields: FieldDef[], categoryId: number, spec: CounterSpec) {
  const plan = planCounter(fields, spec)
  if (!plan || minRows() <= 0) return null
  const mysqlLog = isMysql()
  const key = [categoryId, plan.counter]
  const [row] = await readQuery(
    `SELECT ${SIGNED} AS signed, ${TOTAL_OF('table_counts')}` +
      (mysqlLog
        ? ` + ${TOTAL_OF('table_count_log')} AS total, ${LOG_SIZE} AS logged`
        : ' AS total'),
    [...key, plan.signature, ...key, ...(mysqlLog ? [...key, ...key] : [])]
  )
  if (!row || Number(row.signed) !== 1) return null
  if (mysqlLog && Number(row.logged) > FOLD_AT) foldLater(categoryId, plan.counter)
  return Number(row.total)
}

/** A count the caller made itself: when it is large enough, the counter is made for next time. */
export function noteCount(
  fields: FieldDef[],
  categoryId: number,
  spec: CounterSpec,
  total: number
) {
  const min = minRows()
  if (min <= 0 || total < min) return
  const plan = planCounter(fields, spec)
  if (plan) installLater(categoryId, plan)
}

export const PAST_THE_END = 'past the end'

/**
 * Where the row at `offset` of a counter's rows (in (ord, id) order) is: the lowest `ord` of
 * its bucket and how many of the counter's rows come before it from there; null without a
 * counter (one is made when the offset is large enough); PAST_THE_END when the counter holds
 * no more than `offset` rows (the page is empty).
 */
export async function seekOffset(
  fields: FieldDef[],
  categoryId: number,
  spec: CounterSpec,
  offset: number
): Promise<{ ordFrom: number; inclusive: boolean; skip: number } | typeof PAST_THE_END | null> {
  const min = minRows()
  if (min <= 0 || offset < min) return null
  const plan = planCounter(fields, spec)
  if (!plan) return null
  const mysqlLog = isMysql()
  const [row] = await readQuery(
    `SELECT ${SIGNED} AS signed, f.bucket, f.n, f.total` +
      (mysqlLog ? `, ${LOG_SIZE} AS logged` : '') +
      ` FROM (SELECT 1 AS one) o LEFT JOIN (SELECT bucket, n, total FROM (SELECT bucket, n, ` +
      `SUM(n) OVER (ORDER BY bucket ROWS UNBOUNDED PRECEDING) AS total FROM (${bucketsSql()}) b) w ` +
      `WHERE total > ? ORDER BY bucket LIMIT 1) f ON 1 = 1`,
    [
      categoryId,
      plan.counter,
      plan.signature,
      ...(mysqlLog ? [categoryId, plan.counter] : []),
      ...bucketsBindings(categoryId, plan.counter),
      offset,
    ]
  )
  if (!row || Number(row.signed) !== 1) {
    installLater(categoryId, plan)
    return null
  }
  if (mysqlLog && Number(row.logged) > FOLD_AT) foldLater(categoryId, plan.counter)
  if (row.bucket === null || row.bucket === undefined) return PAST_THE_END
  const bucket = Number(row.bucket)
  const before = Number(row.total) - Number(row.n)
  // Bucket b holds the ords whose quotient truncates to b: [b·W, (b+1)·W) above zero,
  // ((b-1)·W, (b+1)·W) at zero, ((b-1)·W, b·W] below.
  return bucket > 0
    ? { ordFrom: bucket * BUCKET_WIDTH, inclusive: true, skip: offset - before }
    : { ordFrom: (bucket - 1) * BUCKET_WIDTH, inclusive: false, skip: offset - before }
}

/** Drops the counters of a saved view (deleted, or its filters changed). */
export async function dropCounter(categoryId: number, counter: number) {
  await runForget(categoryId, [counter])
}

/** Drops the counters whose predicate reads one of `columns` (before the columns go). */
export async function dropCountersOn(categoryId: number, columns: string[]) {
  const rows = await db
    .from('table_counters')
    .where('category_id', categoryId)
    .select('counter', 'columns')
  const doomed = rows
    .filter((row) =>
      String(row.columns)
        .split(',')
        .some((column) => columns.includes(column))
    )
    .map((row) => Number(row.counter))
  await runForget(categoryId, doomed)
}

/**
 * Forgets every counter of a row table once the table is dropped: its triggers went with it,
 * and an install still running fails on the missing table before it signs a counter.
 */
export async function forgetCounters(categoryId: number) {
  for (const table of ['table_counters', 'table_counts', 'table_count_log'])
    await db.from(table).where('category_id', categoryId).delete()
}

/** How long forgetting waits for a counter's lock (an object: the tests shorten it). */
export const counterLockWait = { forgetSeconds: 120 }

/**
 * Drops counters, each under its lock. An install or a fold holds it for seconds at most
 * (1.5-3.5 s for an install at 10M rows): forgetting waits for it, and must not go on without
 * it: the column the triggers read would be dropped under them, and on MariaDB every later
 * write of the table would fail. A lock still busy fails the caller with DEADLOCK (retry).
 */
async function runForget(categoryId: number, counters: number[]) {
  for (const counter of counters) {
    const done = await locked(
      categoryId,
      counter,
      (trx) => forget(trx, categoryId, counter),
      counterLockWait.forgetSeconds
    )
    if (done === LOCK_BUSY) {
      logger.error({ categoryId, counter }, 'row counter not dropped: its lock stayed busy')
      throw rpcError('DEADLOCK', "The table's counts are being rebuilt; retry the request")
    }
  }
}
