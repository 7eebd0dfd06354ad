import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { readQuery } from '#core/native_sql'
import { rowTableName } from '../lib/field_types.js'

/**
 * The text index on MariaDB (services/text_index.ts keeps the SQLite one and the shared
 * rules): a side table per indexed column, `tt_<categoryId>_tri_<column>` (gram, row_id),
 * holding every 3-character window of the column's value once per row, primary key
 * (gram, row_id) and no other key. Three triggers on the row table (after insert, after an
 * update that changes the column's bytes, after delete) keep it, so every write path updates
 * it in the write's own transaction without knowing of it. A row's grams are forgotten by
 * looking up each window of its old value in the primary key (forgetGrams): the index holds
 * exactly the grams of each row's value, so those are all of the row's entries. Indexes built
 * before 2026-11-26 also have a key on row_id, which their triggers' `DELETE ... WHERE row_id`
 * uses; a new build has none: a second B-tree as large as a third of the table, which made a
 * build 1.8 times slower (10M rows: ~520M grams).
 *
 * Never missing a row LIKE finds: the gram column has the row column's own character set and
 * collation (read from information_schema), and MariaDB's LIKE compares one character with
 * one character under that collation (`'ß' LIKE 'ss'` is false, `'ß' = 'ss'` true under
 * utf8mb4_unicode_ci; `'É' LIKE 'e'` and `'😀' LIKE '😁'` are true under utf8mb4_general_ci).
 * A row LIKE matches thus holds, for each 3-character window of the pattern, a window
 * equal to it character by character, hence equal under the collation's `=`, which is at
 * least as loose (expansions, trailing spaces): the gram lookup `gram = ?` finds it. Grams
 * are stored by INSERT IGNORE, so of windows the collation deems equal one is kept per row,
 * and any of them finds the others. The update trigger compares the old and new value as
 * bytes (`'abc' = 'ABC'` and `'abc' = 'abc '` hold under the collation, yet their windows
 * differ). Values under 3 characters, empty and NULL ones hold no gram: no pattern the index
 * answers (3 characters or more) can match them by LIKE either.
 *
 * Digit runs also get their 4-character windows (indexes built since 2026-11-27, table
 * comment READY_WITH_DIGITS): 3 digits make only 1,000 grams, so at 10M rows each is in ~50,000
 * rows and a search of a number was driven by 50,000 candidates; a 4-digit window is in ~4,000.
 * A window is stored when each of its characters sorts between '0' and '9' under the column's
 * collation (so every character the collation deems equal to a digit, full-width ones
 * included), and used for a pattern's window of four ASCII digits: a row LIKE matches holds a
 * window equal to it character by character, hence stored.
 *
 * The index only narrows the candidates (rows holding the pattern's rarest grams, at most
 * 6); the unchanged LIKE decides.
 */

/** The gram table of a row table's column. */
export const gramTableName = (categoryId: number, column: string) =>
  `tt_${categoryId}_tri_${column}`

const q = (identifier: string) => `\`${identifier.replace(/`/g, '``')}\``

/**
 * A built index's table comment; a table still being filled (or left by a crash) has another.
 * READY: built before digit runs' 4-character windows (still used, with 3-character grams only).
 */
const READY = 'quire text index'
const READY_WITH_DIGITS = 'quire text index, digit 4-grams'
const BUILDING = 'quire text index (building)'

/**
 * The grams used to narrow one pattern: the rarest, at most this many. The rarest drives (its
 * rows are read); each further gram is a primary-key check on the rows that passed the ones
 * before, so it costs little and cuts the candidates: at 10M rows, 'alpha delta 7932' had more
 * than 1,000 rows holding its 3 rarest grams (a scan of the table then), 38 holding its 6
 * rarest; other searches of a name went from ~300 candidates to 1-7.
 */
const NARROWING_GRAMS = 6
/**
 * At most this many of a long pattern's grams are estimated by a probe (one index dive each).
 * With 12, 'foxtrot alpha 5' (13 grams) left out its rarest, 't a' (10,000 rows at 1M), and
 * was driven by 'a 5' (66,000): 80 ms a walk instead of 31 (both measured beside a 10M seeding).
 */
const PROBED_GRAMS = 16
/**
 * When even the pattern's rarest gram has more rows than this (InnoDB's estimate), and more
 * than a PROBE_SHARE-th of the table's rows, the scan answers without a count of the
 * candidates. On a big table every gram is common: at 10M rows each 3-digit gram is in ~50,000
 * rows, so a fixed bound sent every search of a number to a scan of the whole table (seconds),
 * where the rows holding three of its grams are counted in ~50,000 index steps. A common
 * pattern's count stops at maxCandidates + 1 rows found, so a probe costs little there too.
 */
const SECOND_PROBE_MAX = 10_000
/**
 * A walk driven by a gram costs ~1-3 µs a candidate (its further grams checked by primary
 * key), a scan ~0.3 µs a row with its LIKE, and a read walks the candidates twice at most (the
 * page, then the count): the grams drive while the rarest holds less than a tenth of the rows.
 * With a 50th, a search of a few dozen rows on 1M rows whose rarest gram held 21,000 scanned
 * the table (getReferenceFieldValues 'kilo alpha 10': 850 ms, 61 ms driven).
 */
const PROBE_SHARE = 10
/** Rows filled per statement when building an index for existing rows. */
const BUILD_BATCH = 20_000

/** The distinct 3-character windows of `text` (by code point, as MariaDB counts characters). */
export function gramsOf(text: string): string[] {
  const chars = Array.from(text)
  const grams = new Set<string>()
  for (let i = 0; i + 3 <= chars.length; i++) grams.add(chars.slice(i, i + 3).join(''))
  return [...grams]
}

/** The distinct windows of four ASCII digits in `text` (looked up in an index with them). */
export function digitGramsOf(text: string): string[] {
  const grams = new Set<string>()
  for (const run of text.match(/[0-9]{4,}/g) ?? [])
    for (let i = 0; i + 4 <= run.length; i++) grams.add(run.slice(i, i + 4))
  return [...grams]
}

/**
 * SQL: whether the 4 characters of `value` from position `at` on are each between '0' and '9'
 * under `value`'s collation (the column's: a literal yields to it).
 */
const digitWindow = (value: string, at: string) =>
  [0, 1, 2, 3]
    .map((k) => `SUBSTRING(${value}, ${at}${k ? ` + ${k}` : ''}, 1) BETWEEN '0' AND '9'`)
    .join(' AND ')

/**
 * Columns of row table `categoryId` that have a built gram index, and those of them whose
 * index also holds digit runs' 4-character windows.
 */
export async function builtColumns(
  categoryId: number
): Promise<{ columns: Set<string>; withDigitGrams: Set<string> }> {
  const prefix = gramTableName(categoryId, '')
  const rows = await readQuery(
    `SELECT TABLE_NAME AS name, TABLE_COMMENT AS comment FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ? AND TABLE_COMMENT IN (?, ?)`,
    [`${prefix.replace(/_/g, '\\_')}%`, READY, READY_WITH_DIGITS]
  )
  const columnOf = (row: Record<string, unknown>) => String(row.name).slice(prefix.length)
  return {
    columns: new Set(rows.map(columnOf)),
    withDigitGrams: new Set(rows.filter((row) => row.comment === READY_WITH_DIGITS).map(columnOf)),
  }
}

/** Whether the Sequence engine's virtual tables (seq_1_to_N) answer here. */
let sequenceEngine: boolean | undefined
async function hasSequenceEngine() {
  if (sequenceEngine === undefined) {
    try {
      await db.rawQuery('SELECT seq FROM seq_1_to_1')
      sequenceEngine = true
    } catch {
      sequenceEngine = false
    }
  }
  return sequenceEngine
}

/** A range the Sequence engine serves: every character position of a mediumtext value. */
const SEQ = 'seq_1_to_16777216'

/**
 * The trigger statements deleting the grams of `OLD.<column>` (row `OLD.id`): each window of
 * the old value looked up in the primary key (gram, row_id). Windows that the collation deems
 * equal were stored once; `gram = ?` under that collation finds the one kept.
 */
function forgetGrams(table: string, column: string, sequence: boolean) {
  const col = `OLD.${q(column)}`
  if (sequence)
    return (
      `BEGIN DELETE g FROM ${SEQ} s STRAIGHT_JOIN ${table} g ON g.gram = SUBSTRING(${col}, s.seq, 3) AND g.row_id = OLD.id WHERE s.seq <= CHAR_LENGTH(${col}) - 2; ` +
      `DELETE g FROM ${SEQ} s STRAIGHT_JOIN ${table} g ON g.gram = SUBSTRING(${col}, s.seq, 4) AND g.row_id = OLD.id ` +
      `WHERE s.seq <= CHAR_LENGTH(${col}) - 3 AND ${digitWindow(col, 's.seq')}; END;`
    )
  return (
    `BEGIN DECLARE i INT DEFAULT 1; DECLARE n INT DEFAULT COALESCE(CHAR_LENGTH(${col}), 0) - 2; ` +
    `WHILE i <= n DO DELETE FROM ${table} WHERE gram = SUBSTRING(${col}, i, 3) AND row_id = OLD.id; ` +
    `IF i < n AND ${digitWindow(col, 'i')} THEN DELETE FROM ${table} WHERE gram = SUBSTRING(${col}, i, 4) AND row_id = OLD.id; END IF; ` +
    `SET i = i + 1; END WHILE; END;`
  )
}

/** The trigger statements inserting the grams of `NEW.<column>` (row `NEW.id`). */
function insertGrams(table: string, column: string, sequence: boolean) {
  const col = `NEW.${q(column)}`
  if (sequence)
    return (
      `INSERT IGNORE INTO ${table} (gram, row_id) SELECT SUBSTRING(${col}, seq, 3), NEW.id FROM ${SEQ} WHERE seq <= CHAR_LENGTH(${col}) - 2 ` +
      `UNION ALL SELECT SUBSTRING(${col}, seq, 4), NEW.id FROM ${SEQ} WHERE seq <= CHAR_LENGTH(${col}) - 3 AND ${digitWindow(col, 'seq')};`
    )
  return (
    `BEGIN DECLARE i INT DEFAULT 1; DECLARE n INT DEFAULT COALESCE(CHAR_LENGTH(${col}), 0) - 2; ` +
    `WHILE i <= n DO INSERT IGNORE INTO ${table} (gram, row_id) VALUES (SUBSTRING(${col}, i, 3), NEW.id); ` +
    `IF i < n AND ${digitWindow(col, 'i')} THEN INSERT IGNORE INTO ${table} (gram, row_id) VALUES (SUBSTRING(${col}, i, 4), NEW.id); END IF; ` +
    `SET i = i + 1; END WHILE; END;`
  )
}

const triggerNames = (name: string) => ({ ai: `${name}_ai`, au: `${name}_au`, ad: `${name}_ad` })

/**
 * Builds the column's index: the table, then its triggers (every write from then on keeps
 * it), then the existing rows in batches (INSERT IGNORE … SELECT: a row written meanwhile is
 * indexed by its trigger, and read again by the fill at worst). Readers use it once its
 * comment says it is built. MariaDB commits DDL at once: a build is not one transaction, and
 * a build interrupted midway is redone by the next call. Idempotent. `onProgress` hears of
 * each batch filled: the ids covered so far and the id range's size (tables:index-text shows it).
 */
export async function createGramIndex(
  categoryId: number,
  column: string,
  onProgress?: (done: number, total: number) => void
): Promise<boolean> {
  const name = gramTableName(categoryId, column)
  const rowTable = rowTableName(categoryId)
  const [info] = await readQuery(
    `SELECT T.TABLE_COMMENT AS comment FROM information_schema.TABLES T
      WHERE T.TABLE_SCHEMA = DATABASE() AND T.TABLE_NAME = ?`,
    [name]
  )
  // Built already (with digit 4-grams or before them): left as it is.
  if (info?.comment === READY || info?.comment === READY_WITH_DIGITS) return false
  if (info) await dropGramIndex(categoryId, column)
  const [columnInfo] = await readQuery(
    `SELECT CHARACTER_SET_NAME AS charset, COLLATION_NAME AS collation FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`,
    [rowTable, column]
  )
  if (!columnInfo?.charset) return false
  const charset = String(columnInfo.charset)
  const collation = String(columnInfo.collation)
  const table = q(name)
  await db.rawQuery(
    `CREATE TABLE ${table} (gram VARCHAR(4) CHARACTER SET ${charset} COLLATE ${collation} NOT NULL, ` +
      `row_id BIGINT UNSIGNED NOT NULL, PRIMARY KEY (gram, row_id)) ` +
      `ENGINE=InnoDB COMMENT='${BUILDING}'`
  )
  const sequence = await hasSequenceEngine()
  const triggers = triggerNames(name)
  const rows = q(rowTable)
  const col = q(column)
  const forget = forgetGrams(table, column, sequence)
  await db.rawQuery(
    `CREATE TRIGGER ${q(triggers.ai)} AFTER INSERT ON ${rows} FOR EACH ROW ${insertGrams(table, column, sequence).replace(/;$/, '')}`
  )
  await db.rawQuery(
    `CREATE TRIGGER ${q(triggers.au)} AFTER UPDATE ON ${rows} FOR EACH ROW ` +
      `IF NOT (CAST(OLD.${col} AS BINARY) <=> CAST(NEW.${col} AS BINARY)) OR OLD.id <> NEW.id THEN ` +
      `${forget} ${insertGrams(table, column, sequence)} END IF`
  )
  await db.rawQuery(
    `CREATE TRIGGER ${q(triggers.ad)} AFTER DELETE ON ${rows} FOR EACH ROW ${forget.replace(/;$/, '')}`
  )
  // The existing rows, by id ranges (short statements: writers wait on a batch at most).
  const [bounds] = await readQuery(`SELECT MIN(id) AS low, MAX(id) AS high FROM ${rows}`)
  if (bounds?.low !== null && bounds?.low !== undefined) {
    const high = Number(bounds.high)
    for (let low = Number(bounds.low); low <= high; low += BUILD_BATCH) {
      const range = [low, Math.min(high, low + BUILD_BATCH - 1)]
      if (sequence)
        await db.rawQuery(
          `INSERT IGNORE INTO ${table} (gram, row_id) SELECT SUBSTRING(t.${col}, s.seq, 3), t.id ` +
            `FROM ${rows} t JOIN ${SEQ} s ON s.seq <= CHAR_LENGTH(t.${col}) - 2 WHERE t.id BETWEEN ? AND ? ` +
            `UNION ALL SELECT SUBSTRING(t.${col}, s.seq, 4), t.id FROM ${rows} t JOIN ${SEQ} s ` +
            `ON s.seq <= CHAR_LENGTH(t.${col}) - 3 AND ${digitWindow(`t.${col}`, 's.seq')} WHERE t.id BETWEEN ? AND ?`,
          [...range, ...range]
        )
      else {
        // Without the Sequence engine: the positions by a recursive CTE, up to the batch's longest.
        const [longest] = await readQuery(
          `SELECT MAX(CHAR_LENGTH(${col})) AS n FROM ${rows} WHERE id BETWEEN ? AND ?`,
          range
        )
        const last = Number(longest?.n ?? 0) - 2
        if (last < 1) continue
        await db.rawQuery(
          `INSERT IGNORE INTO ${table} (gram, row_id) WITH RECURSIVE p (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM p WHERE n < ${last}) ` +
            `SELECT SUBSTRING(t.${col}, p.n, 3), t.id FROM ${rows} t JOIN p ON p.n <= CHAR_LENGTH(t.${col}) - 2 WHERE t.id BETWEEN ? AND ? ` +
            `UNION ALL SELECT SUBSTRING(t.${col}, p.n, 4), t.id FROM ${rows} t JOIN p ` +
            `ON p.n <= CHAR_LENGTH(t.${col}) - 3 AND ${digitWindow(`t.${col}`, 'p.n')} WHERE t.id BETWEEN ? AND ?`,
          [...range, ...range]
        )
      }
      onProgress?.(range[1] - Number(bounds.low) + 1, high - Number(bounds.low) + 1)
    }
  }
  await db.rawQuery(`ALTER TABLE ${table} COMMENT = '${READY_WITH_DIGITS}'`)
  return true
}

/** Drops the column's index and its triggers. */
export async function dropGramIndex(
  categoryId: number,
  column: string,
  client: QueryClientContract = db.connection()
) {
  const name = gramTableName(categoryId, column)
  for (const trigger of Object.values(triggerNames(name)))
    await client.rawQuery(`DROP TRIGGER IF EXISTS ${q(trigger)}`)
  await client.rawQuery(`DROP TABLE IF EXISTS ${q(name)}`)
}

/** Every gram table of a row table, built or not (dropping the row table). */
export async function gramTables(categoryId: number): Promise<string[]> {
  const prefix = gramTableName(categoryId, '')
  const rows = await readQuery(
    `SELECT TABLE_NAME AS name FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ?`,
    [`${prefix.replace(/_/g, '\\_')}%`]
  )
  return rows.map((row) => String(row.name).slice(prefix.length))
}

/** Spreads `count` picks over `list` (first and last included). */
function spread<T>(list: T[], count: number): T[] {
  if (list.length <= count) return list
  return Array.from(
    { length: count },
    (_, i) => list[Math.round((i * (list.length - 1)) / (count - 1))]
  )
}

/** The row table of gram table `name` (tt_<categoryId>_tri_<column> -> tt_<categoryId>). */
const rowTableOf = (name: string) => /^(tt_\d+)_tri_/.exec(name)?.[1] ?? null

/**
 * The pattern's grams (at most PROBED_GRAMS, spread over it) with the rows InnoDB estimates
 * each has (EXPLAIN: an index dive per gram, no row read), rarest first, and the row table's
 * estimated size (its statistics): one query.
 */
async function estimate(name: string, text: string, withDigitGrams: boolean) {
  // A number's 4-digit windows first: the rarest, when the index has them.
  const digits = withDigitGrams ? spread(digitGramsOf(text), PROBED_GRAMS / 2) : []
  const grams = [...digits, ...spread(gramsOf(text), PROBED_GRAMS - digits.length)]
  if (grams.length === 0) return { ranked: [], tableRows: 0 }
  const table = q(name)
  const rowTable = rowTableOf(name)
  const plan = await readQuery(
    `EXPLAIN ${grams.map(() => `SELECT row_id FROM ${table} WHERE gram = ?`).join(' UNION ALL ')}` +
      (rowTable ? ` UNION ALL SELECT id FROM ${q(rowTable)}` : ''),
    grams
  )
  const estimates = new Map<number, number>()
  for (const row of plan) if (row.id !== null) estimates.set(Number(row.id), Number(row.rows))
  const ranked = grams
    .map((gram, i) => ({ gram, n: estimates.get(i + 1) ?? Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => a.n - b.n)
  return { ranked, tableRows: estimates.get(grams.length + 1) ?? 0 }
}

/**
 * The grams that narrow `text` in the index `name` to at most `maxCandidates` rows, rarest
 * first, or null when the pattern's rows are many (the scan answers). The grams are ranked by
 * InnoDB's estimates (estimate; digit 4-grams too when the index holds them); when the rarest
 * has at most SECOND_PROBE_MAX rows (or maxCandidates, or a PROBE_SHARE-th of the table, if
 * more), the rows holding the rarest six are counted, LIMIT-ed: at most maxCandidates, they
 * answer.
 */
export async function probeGrams(
  name: string,
  text: string,
  maxCandidates: number,
  withDigitGrams: boolean
): Promise<string[] | null> {
  const { ranked, tableRows } = await estimate(name, text, withDigitGrams)
  if (ranked.length === 0) return null
  if (ranked[0].n > Math.max(SECOND_PROBE_MAX, maxCandidates, tableRows / PROBE_SHARE)) return null
  const chosen = ranked.slice(0, NARROWING_GRAMS).map((entry) => entry.gram)
  // The join itself (not gramRows' materialized form): the count stops at the LIMIT.
  const join = gramJoin(name, chosen)
  const [found] = await readQuery(
    `SELECT COUNT(*) AS n FROM (SELECT g0.row_id FROM ${join.from} WHERE ${join.where} LIMIT ${maxCandidates + 1}) c`,
    join.bindings
  )
  return Number(found.n) <= maxCandidates ? chosen : null
}

/**
 * The gram table joined to itself once per gram of `grams` (g0 the first: the rarest, which
 * drives), and the WHERE naming each gram.
 */
function gramJoin(name: string, grams: string[]) {
  const table = q(name)
  const joins = grams
    .slice(1)
    .map((_, i) => ` STRAIGHT_JOIN ${table} g${i + 1} ON g${i + 1}.row_id = g0.row_id`)
    .join('')
  return {
    from: `${table} g0${joins}`,
    where: grams.map((_, i) => `g${i}.gram = ?`).join(' AND '),
    bindings: [...grams] as unknown[],
  }
}

/**
 * The rows holding every gram of `grams`, as a subquery selecting `row_id` (for `t.id IN (…)`):
 * a derived table with DISTINCT, which MariaDB materializes, so that the candidates are found
 * gram by gram (primary key steps) before any row is read. Merged into the read as a semi-join,
 * the optimizer could read the row table first, in page order, testing each row: on 1M rows,
 * with a rarest gram of 11,000 rows, 3.3-4.7 s for a page against 18-108 ms this way.
 */
export function gramRows(name: string, grams: string[]) {
  const join = gramJoin(name, grams)
  return {
    sql: `SELECT c.row_id FROM (SELECT DISTINCT g0.row_id FROM ${join.from} WHERE ${join.where}) c`,
    bindings: join.bindings,
  }
}

/** The read driven by the grams' rows: FROM and WHERE (see text_index.ts textIndexDriver). */
export function gramDriver(name: string, grams: string[]) {
  const join = gramJoin(name, grams)
  return {
    from: (rows: string) => `${join.from} STRAIGHT_JOIN ${rows} t ON t.id = g0.row_id`,
    where: { sql: join.where, bindings: join.bindings },
  }
}

/**
 * Compares the index with the grams of the rows (both ways, under the gram column's
 * collation): throws when a row's gram is missing or a gram names a row that no longer holds
 * it. The tests' integrity check (FTS5's integrity-check on SQLite).
 */
export async function checkGramIndex(categoryId: number, column: string) {
  const table = q(gramTableName(categoryId, column))
  const rows = q(rowTableName(categoryId))
  const col = q(column)
  const [info] = await readQuery(
    'SELECT TABLE_COMMENT AS comment FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    [gramTableName(categoryId, column)]
  )
  const expected =
    `SELECT DISTINCT SUBSTRING(t.${col}, s.seq, 3) AS gram, t.id AS row_id FROM ${rows} t JOIN ${SEQ} s ON s.seq <= CHAR_LENGTH(t.${col}) - 2` +
    (info?.comment === READY_WITH_DIGITS
      ? ` UNION SELECT SUBSTRING(t.${col}, s.seq, 4), t.id FROM ${rows} t JOIN ${SEQ} s ` +
        `ON s.seq <= CHAR_LENGTH(t.${col}) - 3 AND ${digitWindow(`t.${col}`, 's.seq')}`
      : '')
  const [missing] = await readQuery(
    `SELECT COUNT(*) AS n FROM (${expected}) e WHERE NOT EXISTS (SELECT 1 FROM ${table} g WHERE g.gram = e.gram AND g.row_id = e.row_id)`
  )
  const [stale] = await readQuery(
    `SELECT COUNT(*) AS n FROM ${table} g WHERE NOT EXISTS (SELECT 1 FROM (${expected}) e WHERE e.gram = g.gram AND e.row_id = g.row_id)`
  )
  if (Number(missing.n) || Number(stale.n))
    throw new Error(
      `Text index ${gramTableName(categoryId, column)} out of step: ${missing.n} grams missing, ${stale.n} stale`
    )
}
