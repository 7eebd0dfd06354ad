import db from '@adonisjs/lucid/services/db'
import { rowTableName } from '../lib/field_types.js'

/**
 * The pivot index of a row table (README, "Pivot index"): one per table, on the columns of
 * its saved pivot (PivotService.ensureIndex). A plain index, so the database keeps it on
 * every write (api.php, socket, console, tokens, rollback, import) like any other.
 */
const isMysql = () => db.connection().dialect.name === 'mysql'
const quote = (id: string) => (isMysql() ? `\`${id}\`` : `"${id}"`)
export const pivotIndexName = (categoryId: number) => `${rowTableName(categoryId)}_pivot_idx`

/** The columns of the table's pivot index, in index order; [] when it has none. */
export async function pivotIndexColumns(categoryId: number): Promise<string[]> {
  const name = pivotIndexName(categoryId)
  if (isMysql()) {
    const [rows] = await db.rawQuery(
      'SELECT COLUMN_NAME AS name FROM information_schema.STATISTICS ' +
        'WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = ? ORDER BY SEQ_IN_INDEX',
      [rowTableName(categoryId), name]
    )
    return rows.map((row: { name: string }) => String(row.name))
  }
  const rows = await db.rawQuery('SELECT name FROM pragma_index_info(?) ORDER BY seqno', [name])
  return rows.map((row: { name: string }) => String(row.name))
}

/** Makes the pivot index on `columns` (replacing one on other columns); [] drops it. DDL: outside transactions. */
export async function ensurePivotIndex(categoryId: number, columns: string[]) {
  const current = await pivotIndexColumns(categoryId)
  if (current.join(',') === columns.join(',')) return
  const table = quote(rowTableName(categoryId))
  const name = quote(pivotIndexName(categoryId))
  if (current.length)
    await db.rawQuery(
      isMysql() ? `DROP INDEX IF EXISTS ${name} ON ${table}` : `DROP INDEX IF EXISTS ${name}`
    )
  if (columns.length)
    await db.rawQuery(`CREATE INDEX ${name} ON ${table} (${columns.map(quote).join(', ')})`)
}

/** Drops the pivot index when it names one of `columns` (SQLite refuses to drop such a column). */
export async function dropPivotIndexOn(categoryId: number, columns: string[]) {
  const current = await pivotIndexColumns(categoryId)
  if (current.some((column) => columns.includes(column))) await ensurePivotIndex(categoryId, [])
}
