import { rpcError } from '#core/rpc/errors'

/**
 * What one smart table may hold (README.md, "Limits"). Every stored text has
 * a length, every list a count: a table's structure is repeated in answers
 * (getBookTables pairs each tab with its table), so an unbounded name or an
 * unbounded count of tabs would make every member's answer unbounded too.
 */
export const TABLE_LIMITS = {
  /** Names of tables, fields and views (characters). */
  nameLength: 255,
  /** Sync codes of tables and fields (characters). */
  codeLength: 64,
  /** Descriptions of tables, fields and views (characters). */
  descriptionLength: 4_000,
  /** A table's webhook URL (characters). */
  urlLength: 2_048,
  /** A JSON setting once stored: field options, a table's prefs and rights, a view's card, calendar, hidden fields. */
  settingBytes: 16_384,
  /** The text of a mediumtext (and other long text) cell (characters). */
  longTextLength: 100_000,
  tablesPerBook: 200,
  fieldsPerTable: 500,
  viewsPerTable: 50,
  tabsPerTable: 10,
  /** Filters in a view's filter group, nested groups and their filters included. */
  filtersPerView: 100,
} as const

const refuse = (field: string, message: string) =>
  rpcError('INVALID_PARAMETER', `Invalid parameter ${field}: ${message}`, { field })

/** A stored setting as JSON text, refused when larger than settingBytes. */
export function settingJson(value: unknown, field: string): string {
  const json = JSON.stringify(value)
  if (Buffer.byteLength(json) > TABLE_LIMITS.settingBytes)
    throw refuse(field, `more than ${TABLE_LIMITS.settingBytes} bytes`)
  return json
}

/** Refuses a new item when `count` items of its kind already exist. */
export function assertRoomFor(
  kind: 'tablesPerBook' | 'fieldsPerTable' | 'viewsPerTable' | 'tabsPerTable',
  count: number
) {
  const limit = TABLE_LIMITS[kind]
  if (count >= limit) {
    const what = {
      tablesPerBook: 'tables in a book',
      fieldsPerTable: 'fields in a table',
      viewsPerTable: 'views in a table',
      tabsPerTable: 'tabs on a table',
    }[kind]
    throw rpcError('CONFLICT', `At most ${limit} ${what}`)
  }
}

/** Refuses a filter group with more than filtersPerView filters, nested ones included. */
export function assertFilterCount(count: number) {
  if (count > TABLE_LIMITS.filtersPerView)
    throw refuse('filterGroup', `more than ${TABLE_LIMITS.filtersPerView} filters`)
}
