import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { rowTableName } from '../lib/field_types.js'

type Row = Record<string, any>

/**
 * A table's rows in id order, one page at a time (`columns`: the columns read, all by default).
 * Each page is read once the caller is done with the previous one, so a caller may write the
 * rows of a page (in its own transaction) before the next is read; a table of a million rows is
 * never held in memory. With `client` (a transaction) the pages are read in it, locked on
 * MariaDB when `lock` is set.
 */
export async function* rowPages(
  categoryId: number,
  options: { size?: number; columns?: string[]; client?: QueryClientContract; lock?: boolean } = {}
): AsyncGenerator<Row[]> {
  const table = rowTableName(categoryId)
  const client = options.client ?? db.connection()
  let after = 0
  for (;;) {
    const query = client
      .from(table)
      .where('id', '>', after)
      .orderBy('id')
      .limit(options.size ?? 2000)
    if (options.columns) query.select(...options.columns)
    if (options.lock && client.dialect.name === 'mysql') query.forUpdate()
    const rows: Row[] = await query
    if (rows.length === 0) return
    yield rows
    after = Number(rows[rows.length - 1].id)
  }
}

/** A table's row ids in id order, page by page (see rowPages). */
export async function* rowIdPages(categoryId: number, size = 2000): AsyncGenerator<number[]> {
  for await (const rows of rowPages(categoryId, { size, columns: ['id'] }))
    yield rows.map((row) => Number(row.id))
}
