import { quoteId } from '#core/native_sql'
import { formatDateTime } from './field_types.js'

/** A row of a row table (tt_<categoryId>) as the driver answers it, or as a write builds it. */
export type Row = Record<string, any>

/** Rows per statement of multi-row reads, updates and deletes (bindings stay far below the limits). */
export const CHUNK = 500

export const chunks = <T>(items: T[], size = CHUNK) => {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** A temporary row id: a row the client created and the server has not stored yet. */
export const isTmp = (key: string) => key.startsWith('tmp')

/** The stored form of "now" (created_at, updated_at). */
export const nowText = () => formatDateTime(new Date(), true)

/** better-sqlite3 binds no booleans; MySQL takes 1/0 as well. */
export const normalizeBinding = (value: unknown) =>
  typeof value === 'boolean' ? (value ? 1 : 0) : value === undefined ? null : value

/** `INSERT INTO table (columns) VALUES (?, ...), ...` for `count` rows. */
export function insertSql(table: string, columns: string[], count: number) {
  const tuple = `(${columns.map(() => '?').join(', ')})`
  return `INSERT INTO ${quoteId(table)} (${columns.map(quoteId).join(', ')}) VALUES ${Array.from({ length: count }, () => tuple).join(', ')}`
}

export function bindingsOf(rows: Row[], columns: string[]) {
  const out: unknown[] = []
  for (const row of rows) for (const column of columns) out.push(normalizeBinding(row[column]))
  return out
}

/** The id list a link column stores (a JSON array), tolerant of empty and broken values. */
export function parseIds(value: unknown): number[] {
  if (value === null || value === undefined || value === '') return []
  try {
    const parsed = typeof value === 'string' ? JSON.parse(value) : value
    return Array.isArray(parsed) ? parsed.map(Number).filter(Number.isFinite) : []
  } catch {
    return []
  }
}
