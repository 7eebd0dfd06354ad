import { DateTime } from 'luxon'

/**
 * A timestamp for query-builder writes, in the same format Lucid models use,
 * so raw updates and model reads agree on SQLite and MySQL (better-sqlite3
 * would otherwise store a Date as a number).
 */
export function dbTimestamp(at: DateTime | Date = DateTime.now()): string {
  const value = at instanceof Date ? DateTime.fromJSDate(at) : at
  return value.toFormat('yyyy-MM-dd HH:mm:ss')
}
