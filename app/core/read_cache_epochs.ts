import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * What readCached (app/core/native_sql.ts) keeps its SQLite results by: one epoch per table it
 * reads, bumped by triggers on every row written (inserted, updated, deleted, foreign-key
 * cascades included), in the writing transaction, by any connection of any process. A cached
 * result stays valid while the epochs of every table its statement reads are unchanged, so the
 * session and book lookups survive the commits of cell writes, messages and history; a revoked
 * session is re-read at once by every process, the revoking commit having bumped api_sessions.
 *
 * A statement reading a table without an epoch row falls back to the old rule: dropped at any
 * commit (PRAGMA data_version). MariaDB has no triggers here: readCached does not cache there.
 */
export const EPOCHS_TABLE = 'read_cache_epochs'

const isSqlite = (client: QueryClientContract) => client.dialect.name.includes('sqlite')

const triggerName = (table: string, event: string) => `${table}_read_cache_${event}`

/** Creates the epochs table when missing (core migration). */
export async function createEpochsTable(client: QueryClientContract) {
  if (!isSqlite(client)) return
  await client.rawQuery(
    `CREATE TABLE IF NOT EXISTS ${EPOCHS_TABLE} (table_name TEXT PRIMARY KEY, epoch INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`
  )
}

/** Gives each table an epoch and the triggers that bump it (a plugin's migration for its tables). */
export async function trackTables(client: QueryClientContract, tables: string[]) {
  if (!isSqlite(client)) return
  await createEpochsTable(client)
  for (const table of tables) {
    await client.rawQuery(
      `INSERT OR IGNORE INTO ${EPOCHS_TABLE} (table_name, epoch) VALUES (?, 0)`,
      [table]
    )
    for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
      await client.rawQuery(
        `CREATE TRIGGER IF NOT EXISTS ${triggerName(table, event.toLowerCase())} AFTER ${event} ON "${table}"
         BEGIN UPDATE ${EPOCHS_TABLE} SET epoch = epoch + 1 WHERE table_name = '${table}'; END`
      )
    }
  }
}

/** Drops the triggers and epochs of `tables` (down migrations). */
export async function untrackTables(client: QueryClientContract, tables: string[]) {
  if (!isSqlite(client)) return
  for (const table of tables) {
    for (const event of ['insert', 'update', 'delete'])
      await client.rawQuery(`DROP TRIGGER IF EXISTS ${triggerName(table, event)}`)
    await client
      .rawQuery(`DELETE FROM ${EPOCHS_TABLE} WHERE table_name = ?`, [table])
      .catch(() => {})
  }
}
