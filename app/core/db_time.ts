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

/** Stamps are wall-clock milliseconds x 10 (app/core/services/stamp_allocator.ts): one hour of them. */
export const STAMPS_PER_HOUR = 36_000_000

/** SQL giving the hour number (ms since the epoch / 3,600,000) of a stamp column. */
export function stampHourSql(column: string, mysql: boolean): string {
  return mysql
    ? `${column} DIV ${STAMPS_PER_HOUR}`
    : `CAST(${column} / ${STAMPS_PER_HOUR} AS INTEGER)`
}
