import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { isMysql, quoteId, readQuery } from '#core/native_sql'
import {
  COMPUTED_TYPES,
  kindOf,
  rawText,
  rowTableName,
  storageOf,
  type FieldDef,
} from '../lib/field_types.js'
import {
  canonicalPredicate,
  FilterCompiler,
  ftsPhrase,
  likeEscape,
  textIndexCondition,
  textIndexKey,
  type CompiledFilter,
  type FilterContext,
  type FilterGroupSpec,
  type TextIndexPlan,
} from '../lib/filter_compiler.js'
import * as grams from './text_index_mysql.js'

/**
 * Substring search by index (issue 23 item 3): a text field's column gets an
 * SQLite FTS5 table with the trigram tokenizer (one per column, "external
 * content": it stores only the index, the text stays in tt_<categoryId>),
 * kept in sync by triggers on the row table, so every write path (api.php,
 * socket, console, tokens, rollback, imports, recompute) updates it in the
 * write's own transaction without knowing of it.
 *
 * The index only narrows the candidates: a filter keeps its LIKE on the row
 * table, so the answer is the scan's exactly (the trigram tokenizer folds
 * Unicode case, LIKE only ASCII case: the index finds a superset, LIKE picks
 * the rows). It is used when it pays: the pattern has at least 3 characters
 * and at most TEXT_INDEX_MAX_CANDIDATES rows hold it (a probe, LIMIT-ed);
 * a common pattern is read faster by the scan, which stops at a page's end.
 *
 * MariaDB (services/text_index_mysql.ts): a side table of 3-character grams per column,
 * `tt_<categoryId>_tri_<column>` (gram, row_id), kept by MariaDB triggers likewise, its gram
 * column in the row column's own collation, so that a gram lookup is at least as loose as
 * LIKE (case, accents, 4-byte characters as that collation compares them). The candidates are
 * the rows holding the pattern's rarest grams (at most 3), then LIKE decides, with the same
 * probe and limits.
 */

/** The trigram tokenizer indexes 3-character windows: shorter patterns scan. */
export const TEXT_INDEX_MIN_LENGTH = 3
/** Above this many candidate rows, the scan (stopping at a page's end) is the faster plan. */
export const TEXT_INDEX_MAX_CANDIDATES = 1000

/** The FTS5 table of a row table's column (its shadow tables add _data, _idx, _docsize, _config). */
export const textIndexName = (categoryId: number, column: string) =>
  `tt_${categoryId}_fts_${column}`

const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`

/**
 * Fields whose column gets a text index: text kinds stored in a column, plain (an encrypted
 * field holds ciphertext; lookups and formulas are rewritten by recomputes on many rows at a
 * time, where the index's write cost would weigh most, and scan).
 */
export function isTextIndexable(
  field: Pick<FieldDef, 'type' | 'options'>,
  column: string | null
): boolean {
  if (!column || field.options.encryption || COMPUTED_TYPES.has(field.type)) return false
  if (kindOf(field) !== 'text') return false
  const storage = storageOf(field)
  return storage === 'string' || storage === 'text'
}

/** A pattern the index can answer: 3 characters or more, and no NUL (LIKE stops at one). */
export const indexablePattern = (text: string) =>
  Array.from(text).length >= TEXT_INDEX_MIN_LENGTH && !text.includes('\0')

/**
 * The text indexes of a row table, cached a few seconds per process: their columns, and on
 * MariaDB those whose index also holds digit runs' 4-character windows.
 */
const CACHE_MS = 5000
interface IndexList {
  at: number
  columns: Set<string>
  withDigitGrams: Set<string>
}
const indexedCache = new Map<number, IndexList>()

/**
 * Patterns a probe sent to the scan (too many rows hold them), per row table, remembered
 * for CACHE_MS: a grid paging through a common search probes once, not on every page. Only
 * that verdict is remembered: a scan never reads the index, so a verdict gone stale costs
 * time, never an answer; a remembered index condition would fail once its index was dropped.
 */
const MAX_SCAN_VERDICTS = 500
const scanVerdicts = new Map<number, Map<string, number>>()

export function forgetTextIndexes(categoryId: number) {
  indexedCache.delete(categoryId)
  scanVerdicts.delete(categoryId)
}

const verdictKey = (column: string, text: string, maxCandidates: number) =>
  `${maxCandidates}\0${column}\0${text}`

function scanRemembered(categoryId: number, key: string) {
  const at = scanVerdicts.get(categoryId)?.get(key)
  return at !== undefined && Date.now() - at < CACHE_MS
}

function rememberScan(categoryId: number, key: string) {
  let verdicts = scanVerdicts.get(categoryId)
  if (!verdicts) scanVerdicts.set(categoryId, (verdicts = new Map()))
  // Oldest first (insertion order): past the bound, the oldest verdict goes.
  verdicts.delete(key)
  verdicts.set(key, Date.now())
  if (verdicts.size > MAX_SCAN_VERDICTS) verdicts.delete(verdicts.keys().next().value!)
}

/**
 * `probeIndex`'s answer (an index's rows for `text` in `column`), or null: the scan answers. A scan
 * verdict (null) is remembered CACHE_MS and answered again without probing; a probe that fails
 * (the index dropped meanwhile by another process) forgets the table's indexes.
 */
async function rememberedProbe<T>(
  categoryId: number,
  column: string,
  text: string,
  maxCandidates: number,
  probeIndex: () => Promise<T | null>
): Promise<T | null> {
  const key = verdictKey(column, text, maxCandidates)
  if (scanRemembered(categoryId, key)) return null
  try {
    const found = await probeIndex()
    if (found === null) rememberScan(categoryId, key)
    return found
  } catch {
    forgetTextIndexes(categoryId)
    return null
  }
}

async function indexList(categoryId: number): Promise<IndexList> {
  const cached = indexedCache.get(categoryId)
  if (cached && Date.now() - cached.at < CACHE_MS) return cached
  let list: IndexList
  if (isMysql()) {
    list = { at: Date.now(), ...(await grams.builtColumns(categoryId)) }
  } else {
    const prefix = textIndexName(categoryId, '')
    const rows = await readQuery(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB ? AND sql LIKE 'CREATE VIRTUAL TABLE%'",
      [`${prefix}*`]
    )
    const columns = new Set(rows.map((row) => String(row.name).slice(prefix.length)))
    list = { at: Date.now(), columns, withDigitGrams: new Set() }
  }
  indexedCache.set(categoryId, list)
  return list
}

/** Columns of a row table that have a text index (cached a few seconds per process). */
export async function indexedColumns(categoryId: number): Promise<Set<string>> {
  const { columns } = await indexList(categoryId)
  return columns
}

/**
 * Creates the column's index, fills it from the rows and adds its triggers, in one
 * transaction (readers never see a half-built index; writers wait for the build).
 * Idempotent: an existing index is left as it is.
 */
export async function createTextIndex(categoryId: number, column: string) {
  if (isMysql()) {
    const built = await grams.createGramIndex(categoryId, column)
    forgetTextIndexes(categoryId)
    return built
  }
  const table = quote(rowTableName(categoryId))
  const name = textIndexName(categoryId, column)
  const index = quote(name)
  const col = quote(column)
  const created = await db.transaction(async (trx) => {
    const existing = await trx.rawQuery('SELECT 1 FROM sqlite_master WHERE name = ?', [name])
    if (existing.length) return false
    await trx.rawQuery(
      `CREATE VIRTUAL TABLE ${index} USING fts5(${col}, content=${quoteLiteral(rowTableName(categoryId))}, content_rowid='id', tokenize='trigram')`
    )
    // Every row, empty ones too: the index then matches its content row for row, which
    // FTS5's integrity-check verifies (the tests run it after every kind of write).
    await trx.rawQuery(`INSERT INTO ${index} (${index}) VALUES ('rebuild')`)
    const insertNew = `INSERT INTO ${index} (rowid, ${col}) VALUES (new.id, new.${col});`
    // An external-content index forgets a row by being told its old text (exactly what it indexed).
    const deleteOld = `INSERT INTO ${index} (${index}, rowid, ${col}) VALUES ('delete', old.id, old.${col});`
    await trx.rawQuery(
      `CREATE TRIGGER ${quote(`${name}_ai`)} AFTER INSERT ON ${table} BEGIN ${insertNew} END`
    )
    await trx.rawQuery(
      `CREATE TRIGGER ${quote(`${name}_ad`)} AFTER DELETE ON ${table} BEGIN ${deleteOld} END`
    )
    await trx.rawQuery(
      `CREATE TRIGGER ${quote(`${name}_au`)} AFTER UPDATE OF ${col} ON ${table} WHEN old.${col} IS NOT new.${col} BEGIN ${deleteOld} ${insertNew} END`
    )
    return true
  })
  forgetTextIndexes(categoryId)
  return created
}

const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`

/** Drops the column's index and its triggers (before the column itself goes). */
export async function dropTextIndex(
  categoryId: number,
  column: string,
  client: QueryClientContract = db.connection()
) {
  if (isMysql()) {
    await grams.dropGramIndex(categoryId, column, client)
    forgetTextIndexes(categoryId)
    return
  }
  const name = textIndexName(categoryId, column)
  for (const suffix of ['_ai', '_ad', '_au'])
    await client.rawQuery(`DROP TRIGGER IF EXISTS ${quote(`${name}${suffix}`)}`)
  await client.rawQuery(`DROP TABLE IF EXISTS ${quote(name)}`)
  forgetTextIndexes(categoryId)
}

/** Drops every text index of a row table (the table is being dropped). */
export async function dropTextIndexes(categoryId: number) {
  indexedCache.delete(categoryId)
  // On MariaDB, a build left unfinished too (its table is not listed as an index).
  const columns = isMysql() ? await grams.gramTables(categoryId) : await indexedColumns(categoryId)
  for (const column of columns) await dropTextIndex(categoryId, column)
}

/**
 * The subquery selecting the ids of the rows `column`'s text index names for `text` (a
 * superset of LIKE's), when the index exists and names at most `maxCandidates` rows (a probe,
 * LIMIT-ed); null: the scan answers.
 */
export async function textIndexRows(
  categoryId: number,
  column: string,
  text: string,
  maxCandidates = TEXT_INDEX_MAX_CANDIDATES
): Promise<{ sql: string; bindings: unknown[] } | null> {
  if (!indexablePattern(text)) return null
  if (isMysql()) {
    const chosen = await chosenGrams(categoryId, column, text, maxCandidates)
    return chosen && grams.gramRows(grams.gramTableName(categoryId, column), chosen)
  }
  const columns = await indexedColumns(categoryId)
  if (!columns.has(column)) return null
  return rememberedProbe(categoryId, column, text, maxCandidates, async () => {
    const name = quote(textIndexName(categoryId, column))
    const sub = {
      sql: `SELECT rowid FROM ${name} WHERE ${name} MATCH ?`,
      bindings: [ftsPhrase(text)],
    }
    const rows = await readQuery(`${sub.sql} LIMIT ${maxCandidates + 1}`, sub.bindings)
    return rows.length <= maxCandidates ? sub : null
  })
}

/** `t.id IN (<rows>)`: the rows an index names, as a condition of a read of the row table. */
const inRows = (rows: { sql: string; bindings: unknown[] }) => ({
  sql: `t.id IN (${rows.sql})`,
  bindings: rows.bindings,
})

/** Both conditions (the index's candidates, then the LIKE that picks among them). */
const both = (
  first: { sql: string; bindings: unknown[] },
  second: { sql: string; bindings: unknown[] }
) => ({ sql: `${first.sql} AND ${second.sql}`, bindings: [...first.bindings, ...second.bindings] })

/**
 * Whether the index should answer `text` in `column`: it exists and holds the pattern in at
 * most TEXT_INDEX_MAX_CANDIDATES rows. Returns the condition on `t.id`, or null (scan).
 */
async function probe(categoryId: number, column: string, text: string) {
  const rows = await textIndexRows(categoryId, column, text)
  if (!rows) return null
  if (!isMysql()) return textIndexCondition(textIndexName(categoryId, column), text)
  return inRows(rows)
}

const INDEXED_PREDICATES = new Set(['contains', 'begins_with', 'ends_with'])

/** Which text predicates of `group` the index answers (probed now), for FilterCompiler. */
export async function planTextIndex(
  fields: FieldDef[],
  group: FilterGroupSpec | null
): Promise<TextIndexPlan> {
  const plan: TextIndexPlan = new Map()
  if (!group) return plan
  const visit = async (filters: FilterGroupSpec['filters']) => {
    for (const filter of filters) {
      if (filter.filter_type === 'group') {
        await visit(filter.json.filters ?? [])
        continue
      }
      if (!INDEXED_PREDICATES.has(canonicalPredicate(filter.json.predicate))) continue
      const field = fields.find((candidate) => candidate.id === filter.field_id)
      if (!field || !isTextIndexable(field, field.column)) continue
      const text = rawText(filter.json.operand)
      const key = textIndexKey(field.column!, text)
      if (plan.has(key)) continue
      const condition = await probe(field.categoryId, field.column!, text)
      if (condition) plan.set(key, condition)
    }
  }
  await visit(group.filters)
  return plan
}

/** Compiles a filter group, with the text index where it answers (every read's entry point). */
export async function compileFilters(
  fields: FieldDef[],
  context: FilterContext,
  group: FilterGroupSpec | null
): Promise<CompiledFilter> {
  const textIndex = await planTextIndex(fields, group)
  return new FilterCompiler(fields, { ...context, textIndex }).compile(group)
}

/** `text` anywhere in `column` by LIKE alone (any case of ASCII letters, wildcards literal). */
export const likeCondition = (column: string, text: string) => ({
  sql: `t.${quoteId(column)} LIKE ? ESCAPE '!'`,
  bindings: [`%${likeEscape(text)}%`] as unknown[],
})

/**
 * getReferenceFieldValues' search: `text` anywhere in `column` (LIKE, any case of ASCII
 * letters), through the index when it answers.
 */
export async function containsCondition(field: FieldDef, column: string, text: string) {
  const like = likeCondition(column, text)
  const index = isTextIndexable(field, column) ? await probe(field.categoryId, column, text) : null
  return index ? both(index, like) : like
}

/**
 * The rows of `column`'s text index that hold `text`, as the outer loop of a read (RowSelection
 * `countUpTo`): `"<fts>" CROSS JOIN <row table> t ON t.id = "<fts>".rowid WHERE "<fts>" MATCH ?`.
 * FTS5 hands its matches one by one, so a LIMIT stops the read after that many candidates that
 * pass the rest of the WHERE (an `IN (SELECT rowid …)` reads them all before the first row).
 * On MariaDB, the rows of the pattern's rarest grams, STRAIGHT_JOINed to the row table.
 * The read keeps its LIKE: the index only finds a superset. Null when there is no index or the
 * pattern is too short for one, and on MariaDB when more than TEXT_INDEX_MAX_CANDIDATES rows
 * hold its grams (the read scans, stopping at its limit).
 */
export async function textIndexDriver(
  field: FieldDef,
  column: string,
  text: string
): Promise<TextIndexDriver | null> {
  if (!isTextIndexable(field, column) || !indexablePattern(text)) return null
  if (isMysql()) {
    const chosen = await chosenGrams(field.categoryId, column, text)
    return chosen && mysqlDriver(field, column, chosen)
  }
  const indexed = await indexedColumns(field.categoryId)
  if (!indexed.has(column)) return null
  const name = quote(textIndexName(field.categoryId, column))
  return {
    from: (table: string) => `${name} CROSS JOIN ${table} t ON t.id = ${name}.rowid`,
    where: { sql: `${name} MATCH ?`, bindings: [ftsPhrase(text)] },
    forget: () => forgetTextIndexes(field.categoryId),
  }
}

/**
 * A search's condition (containsCondition's) and driver (textIndexDriver's) for a read that
 * pages and then counts (getReferenceFieldValues): on MariaDB from one probe, where asking
 * both walked the pattern's candidates twice before the read walked them again.
 */
export async function textSearch(
  field: FieldDef,
  column: string,
  text: string
): Promise<{ condition: { sql: string; bindings: unknown[] }; driver: TextIndexDriver | null }> {
  const indexable = isTextIndexable(field, column) && indexablePattern(text)
  if (!indexable || !isMysql())
    return {
      condition: await containsCondition(field, column, text),
      driver: await textIndexDriver(field, column, text),
    }
  const like = likeCondition(column, text)
  const chosen = await chosenGrams(field.categoryId, column, text)
  if (!chosen) return { condition: like, driver: null }
  const rows = grams.gramRows(grams.gramTableName(field.categoryId, column), chosen)
  return { condition: both(inRows(rows), like), driver: mysqlDriver(field, column, chosen) }
}

/**
 * MariaDB: the pattern's rarest grams when they name at most `maxCandidates` rows; null when
 * the column has no index (or it has gone meanwhile) or the pattern's rows are many (the read
 * scans, stopping at its limit; remembered a few seconds).
 */
async function chosenGrams(
  categoryId: number,
  column: string,
  text: string,
  maxCandidates = TEXT_INDEX_MAX_CANDIDATES
) {
  const list = await indexList(categoryId)
  if (!list.columns.has(column)) return null
  const digits = list.withDigitGrams.has(column)
  return rememberedProbe(categoryId, column, text, maxCandidates, async () => {
    const chosen = await grams.probeGrams(
      grams.gramTableName(categoryId, column),
      text,
      maxCandidates,
      digits
    )
    return chosen || null
  })
}

/** MariaDB: the read driven by the rows of the grams `chosen`, STRAIGHT_JOINed to the row table. */
function mysqlDriver(field: FieldDef, column: string, chosen: string[]): TextIndexDriver {
  const driver = grams.gramDriver(grams.gramTableName(field.categoryId, column), chosen)
  return { ...driver, forget: () => forgetTextIndexes(field.categoryId) }
}

export interface TextIndexDriver {
  /** The FROM clause over the row table `table` (already quoted), aliased `t`. */
  from: (table: string) => string
  where: { sql: string; bindings: unknown[] }
  /** Forgets the cached index list (the index was dropped by another process meanwhile). */
  forget: () => void
}

/**
 * The index against the row table (FTS5's integrity-check; on MariaDB, the rows' grams
 * compared both ways): throws when they differ.
 */
export async function checkTextIndex(categoryId: number, column: string) {
  if (isMysql()) return grams.checkGramIndex(categoryId, column)
  const name = quote(textIndexName(categoryId, column))
  await db.rawQuery(`INSERT INTO ${name} (${name}, rank) VALUES ('integrity-check', 1)`)
}
