import { inject } from '@adonisjs/core'
import { isMysql, quoteId, readQuery } from '#core/native_sql'
import {
  displayText,
  kindOf,
  linkTextColumn,
  rowTableName,
  sideTableName,
  sqlColumnOf,
  type FieldDef,
} from '../lib/field_types.js'
import { likeEscape } from '../lib/filter_compiler.js'
import { primaryField } from '../services/computed_fields.js'
import { MetaService, type CategoryMeta } from '../services/meta_service.js'
import { rowPages } from '../services/row_pages.js'
import { RowSelection, type Selection } from '../services/row_selection.js'
import { SchemaService } from '../services/schema_service.js'
import {
  containsCondition,
  indexablePattern,
  isTextIndexable,
  textIndexRows,
} from '../services/text_index.js'

/**
 * The console grid's speed on big tables (issue 22 item 9), without changing which rows it
 * shows.
 *
 * Search: the grid's search is `contains` on every searchable column, ORed (grid_query.ts).
 * An OR over columns is a full scan, so here each searched column names the rows that may
 * hold the text by an index, and their UNION of row ids narrows the search (the ORed LIKEs
 * still decide, on those rows only):
 * - a text column: its text index (services/text_index.ts: FTS5 trigrams, MariaDB gram tables);
 * - a choice: the options holding the text, then the rows holding those options (the
 *   column's index; a multiple choice's side table);
 * - a link: the linked table's rows whose name (its primary field) holds the text, then the
 *   rows linking to them (the link's side table); a lookup likewise, through its link;
 * - a person: the user codes holding the text, then the rows holding those codes.
 * When one searched column has no such way (a formula, a created-by column, a text
 * of fewer than 3 characters, more than SEARCH_MAX_CANDIDATES candidate rows), the search
 * scans as before (`null`).
 *
 * A search that scans counts at most GridSearch.countCap rows (the grid then says "more than
 * 10,000" and pages through those): a text a fifth of the rows hold costs the scan of the first
 * fifty thousand rows instead of a million.
 *
 * Sort: a column sort of a table of GridSearch.indexMinRows rows or more gets the index a saved
 * view's sort gets (SchemaService.ensureIndex: column, ord, id), built on the first sort
 * and reported in the grid; the page is then read from the index instead of a scan and a
 * top-k sort.
 */

/** Above this many candidate rows from one column, the scan (stopping at a page's end) answers. */
export const SEARCH_MAX_CANDIDATES = 20_000
/** A linked table read to find the rows whose name holds the text: at most this many rows. */
const LINKED_SCAN_MAX = 100_000

interface Sql {
  sql: string
  bindings: unknown[]
}

/** SQLite's LIKE: ASCII letters in any case, every other character as itself. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (char) => char.toLowerCase())
export const likeContains = (value: string, text: string) =>
  asciiLower(value).includes(asciiLower(text))

/** The built index of a grid's sort: the column's name, and how long the build took. */
export interface BuiltIndex {
  field: string
  ms: number
}

@inject()
export class GridSearch {
  /** Tables smaller than this are sorted and searched without building an index (a scan is fast). */
  static indexMinRows = 10_000
  /**
   * A search the indexes cannot narrow counts its rows up to this many (a scan stops there):
   * a common word then costs a part of the table, not all of it; the grid says "more than".
   */
  static countCap = 10_000

  constructor(
    private meta: MetaService,
    private schema: SchemaService,
    private rowSelection: RowSelection
  ) {}

  /** The rows a selection selects, counted up to `cap` + 1 (a scan stops there). */
  async countUpTo(category: CategoryMeta, selection: Selection, cap: number) {
    const where = this.rowSelection.whereOf(selection)
    const rows = await readQuery(
      `SELECT COUNT(*) AS total FROM (SELECT 1 AS one FROM ${quoteId(rowTableName(category.id))} t ${where.sql} LIMIT ${cap + 1}) c`,
      where.bindings
    )
    return Number(rows[0]?.total ?? 0)
  }

  /**
   * The rows the search may match, as a condition on `t.id`; null when an index cannot
   * name them (the search then scans). `fields`: the searched fields (grid_query.ts).
   */
  async candidates(
    category: CategoryMeta,
    fields: FieldDef[],
    text: string
  ): Promise<{ where: Sql; built: BuiltIndex[] } | null> {
    if (!indexablePattern(text)) return null
    const parts: Sql[] = []
    const built: BuiltIndex[] = []
    for (const field of fields) {
      const part = await this.candidatesOf(category, field, text, built)
      if (part === null) return null
      if (part !== 'none') parts.push(part)
    }
    if (parts.length === 0) return { where: { sql: '1 = 0', bindings: [] }, built }
    return {
      where: {
        sql: `t.id IN (${parts.map((part) => part.sql).join(' UNION ')})`,
        bindings: parts.flatMap((part) => part.bindings),
      },
      built,
    }
  }

  private async candidatesOf(
    category: CategoryMeta,
    field: FieldDef,
    text: string,
    built: BuiltIndex[]
  ): Promise<Sql | 'none' | null> {
    const column = sqlColumnOf(field)
    if (!column) return null
    if (field.type === 'lookup') return this.lookupCandidates(category, field, text)
    switch (kindOf(field)) {
      case 'text':
        return this.textCandidates(category, field, text)
      case 'enum': {
        const options = (field.options.values ?? []).filter((value) => likeContains(value, text))
        if (options.length === 0) return 'none'
        return this.columnIn(category, field, column, options, built)
      }
      case 'multi': {
        // The column holds the choices as JSON: a text with JSON's own characters could match
        // across two choices or their quoting, which the side table cannot tell.
        if (/["\\[\],]/.test(text)) return null
        const options = (field.options.values ?? []).filter((value) => likeContains(value, text))
        if (options.length === 0) return 'none'
        return this.sideIn(category, field, options)
      }
      case 'link':
        return this.linkCandidates(category, field, text)
      case 'user': {
        if (field.type !== 'user') return null // created by / changed by: user ids
        const codes = await readQuery(
          `SELECT code FROM users WHERE code LIKE ? ESCAPE '!' LIMIT ${SEARCH_MAX_CANDIDATES + 1}`,
          [`%${likeEscape(text)}%`]
        )
        if (codes.length === 0) return 'none'
        if (codes.length > SEARCH_MAX_CANDIDATES) return null
        const values = codes.map((row) => String(row.code))
        return this.columnIn(category, field, column, values, built)
      }
      default:
        return null
    }
  }

  /** The column's text index: the rows whose text holds `text` (a superset of LIKE's). */
  private async textCandidates(category: CategoryMeta, field: FieldDef, text: string) {
    const column = field.column
    if (!column || !isTextIndexable(field, column)) return null
    return textIndexRows(category.id, column, text, SEARCH_MAX_CANDIDATES)
  }

  /** Whether `sub` selects at most SEARCH_MAX_CANDIDATES rows. */
  private async bounded(sub: Sql) {
    const rows = await readQuery(
      `SELECT COUNT(*) AS n FROM (${sub.sql} LIMIT ${SEARCH_MAX_CANDIDATES + 1}) c`,
      sub.bindings
    )
    return Number(rows[0]?.n ?? 0) <= SEARCH_MAX_CANDIDATES
  }

  /** Rows whose column holds one of `values`, read from the column's index (built if need be). */
  private async columnIn(
    category: CategoryMeta,
    field: FieldDef,
    column: string,
    values: string[],
    built: BuiltIndex[]
  ) {
    // A small table is read whole quickly: it gets no index (false).
    const index = await this.ensureIndex(category, field, column)
    if (index) built.push(index)
    const sub = {
      sql: `SELECT id FROM ${quoteId(rowTableName(category.id))} WHERE ${quoteId(column)} IN (${values.map(() => '?').join(', ')})`,
      bindings: values,
    }
    return (await this.bounded(sub)) ? sub : null
  }

  /** Rows whose side table (a link's or a multiple choice's) holds one of `values`. */
  private async sideIn(category: CategoryMeta, field: FieldDef, values: (string | number)[]) {
    const sub = {
      sql: `SELECT row_id FROM ${quoteId(sideTableName(category.id, field.id))} WHERE value IN (${values.map(() => '?').join(', ')})`,
      bindings: values,
    }
    return (await this.bounded(sub)) ? sub : null
  }

  /**
   * A link's text is its linked rows' names joined by ", ": without a comma in `text`, it
   * holds `text` when one of the names does.
   */
  private async linkCandidates(category: CategoryMeta, field: FieldDef, text: string) {
    if (text.includes(',') || !field.options.linkCatId) return null
    const target = await this.meta.category(field.options.linkCatId)
    const primary = target ? primaryField(target.category) : undefined
    if (!target || !primary) return null
    const ids = await this.matchingRows(target.category.id, primary, text)
    if (ids === null) return null
    if (ids.length === 0) return 'none'
    return this.sideIn(category, field, ids)
  }

  /** A lookup's text is the looked-up values joined by ", ": as a link's, through its link. */
  private async lookupCandidates(category: CategoryMeta, field: FieldDef, text: string) {
    if (text.includes(',')) return null
    const link = category.fields.find((candidate) => candidate.id === field.options.linkFieldId)
    if (!link || link.type !== 'link' || !link.options.linkCatId) return null
    const target = await this.meta.category(link.options.linkCatId)
    const targetField = target?.category.fields.find(
      (candidate) => candidate.id === field.options.targetFieldId
    )
    if (!target || !targetField) return null
    const ids = await this.matchingRows(target.category.id, targetField, text)
    if (ids === null) return null
    if (ids.length === 0) return 'none'
    return this.sideIn(category, link, ids)
  }

  /**
   * The rows of a (linked) table whose `field` shows `text`, as a link's text or a lookup
   * writes it (displayText); null past SEARCH_MAX_CANDIDATES matches or, read here,
   * LINKED_SCAN_MAX rows. Where the stored text is the shown text (text, dates, choices,
   * people, whole numbers), LIKE answers it in SQL (through the text index when it answers).
   */
  private async matchingRows(categoryId: number, field: FieldDef, text: string) {
    const column = sqlColumnOf(field)
    if (!column) return null
    const kind = kindOf(field)
    if (
      !field.options.encryption &&
      (['text', 'date', 'enum', 'user'].includes(kind) || field.type === 'integer')
    ) {
      const condition =
        kind === 'text'
          ? await containsCondition(field, column, text)
          : { sql: `t.${quoteId(column)} LIKE ? ESCAPE '!'`, bindings: [`%${likeEscape(text)}%`] }
      const rows = await readQuery(
        `SELECT t.id FROM ${quoteId(rowTableName(categoryId))} t WHERE ${condition.sql} LIMIT ${SEARCH_MAX_CANDIDATES + 1}`,
        condition.bindings
      )
      return rows.length > SEARCH_MAX_CANDIDATES ? null : rows.map((row) => Number(row.id))
    }
    const ids: number[] = []
    let read = 0
    const columns = ['id', column, ...(field.type === 'link' ? [linkTextColumn(column)] : [])]
    for await (const rows of rowPages(categoryId, { size: 5000, columns })) {
      read += rows.length
      if (read > LINKED_SCAN_MAX) return null
      for (const row of rows) if (likeContains(displayText(field, row), text)) ids.push(row.id)
      if (ids.length > SEARCH_MAX_CANDIDATES) return null
    }
    return ids.map(Number)
  }

  /**
   * The index a sort or a lookup by `column` reads: built (SchemaService.ensureIndex, as for
   * a saved view) when the table has `minRows` rows or more. Returns what was built, null
   * when nothing needed building, false when the column cannot have one (or the table is small).
   */
  async ensureIndex(
    category: CategoryMeta,
    field: FieldDef,
    column: string,
    minRows = GridSearch.indexMinRows
  ): Promise<BuiltIndex | null | false> {
    const kind = kindOf(field)
    if (kind === 'files' || kind === 'none' || kind === 'link' || kind === 'multi') return false
    if (await this.hasIndex(category.id, column)) return null
    if (minRows > 0) {
      const big = await readQuery(
        `SELECT 1 AS one FROM ${quoteId(rowTableName(category.id))} LIMIT 1 OFFSET ${minRows - 1}`
      )
      if (big.length === 0) return false
    }
    const started = performance.now()
    await this.schema.ensureIndex(category.id, field, column)
    return { field: field.name, ms: Math.round(performance.now() - started) }
  }

  /** Whether an index of the row table starts with `column`. */
  private async hasIndex(categoryId: number, column: string) {
    const table = rowTableName(categoryId)
    const rows = isMysql()
      ? await readQuery(
          'SELECT 1 AS one FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ? AND seq_in_index = 1 LIMIT 1',
          [table, column]
        )
      : await readQuery(
          'SELECT 1 AS one FROM pragma_index_list(?) l, pragma_index_info(l.name) i WHERE i.seqno = 0 AND i.name = ? LIMIT 1',
          [table, column]
        )
    return rows.length > 0
  }
}
