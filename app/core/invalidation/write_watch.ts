/**
 * Whether a statement as knex sends it (Lucid models, query builder, raw queries) may change a
 * row of one of `tables`: an UPDATE, DELETE or REPLACE names the table right after its verb, an
 * upsert (INSERT ... ON DUPLICATE KEY UPDATE) may change an existing row. A plain INSERT is left
 * out: a new row is no cached row.
 */
export function writesTo(tables: string[]): (sql: string) => boolean {
  const names = tables.map((table) => table.replace(/[^\w]/g, '')).join('|')
  const write = new RegExp(
    `^\\s*(?:update(?:\\s+ignore)?|delete(?:\\s+ignore)?\\s+from|replace(?:\\s+into)?)\\s+[\`"]?(?:${names})[\`"]?[\\s(]`,
    'i'
  )
  const upsert = new RegExp(
    `^\\s*insert(?:\\s+ignore)?\\s+into\\s+[\`"]?(?:${names})[\`"]?[\\s(][\\s\\S]*\\bon\\s+duplicate\\s+key\\b`,
    'i'
  )
  return (sql) => write.test(sql) || upsert.test(sql)
}

/**
 * The safety net under a cache's explicit invalidations: every statement of these knex
 * instances that `writes` recognises marks its connection, and when that connection goes back to
 * the pool (its transaction committed or rolled back, or its autocommit statement done)
 * `onWritten` runs. So a change made by any code through knex is not answered from a cache for
 * longer than one invalidation takes. Statements run on the driver itself
 * (app/core/native_sql.ts) are not seen: such a write must invalidate explicitly.
 *
 * Call it once per cache: a knex instance given twice (a read client that is the write client)
 * is watched once.
 */
export function watchWrites(
  knexes: unknown[],
  writes: (sql: string) => boolean,
  onWritten: () => void
) {
  const clients = new Set(knexes.map((knex) => (knex as { client?: any } | null)?.client))
  for (const client of clients) {
    if (!client) continue
    // The connections (by knex's uid) that wrote a watched table since they were acquired.
    const dirty = new Set<unknown>()
    client.on('query', (query: { sql?: string; __knexUid?: unknown }) => {
      if (typeof query.sql === 'string' && writes(query.sql)) dirty.add(query.__knexUid)
    })
    const pool = client.pool
    if (!pool || typeof pool.on !== 'function') continue
    const released = (connection: { __knexUid?: unknown } | undefined) => {
      if (dirty.size > 0 && dirty.delete(connection?.__knexUid)) onWritten()
    }
    pool.on('release', released)
    // A connection destroyed instead of released (an error): its transaction rolled back, but
    // an autocommit statement may have gone through; invalidate all the same.
    pool.on('destroySuccess', (_id: unknown, connection: { __knexUid?: unknown }) =>
      released(connection)
    )
  }
}
