import { BaseSchema } from '@adonisjs/lucid/schema'
import { EPOCHS_TABLE, trackTables, untrackTables } from '#core/read_cache_epochs'

/**
 * SQLite only: epochs of the tables readCached reads on every api.php call (the session and its
 * user), bumped by triggers, so a cached session survives the commits that do not touch them
 * (app/core/read_cache_epochs.ts).
 */
const TABLES = ['api_sessions', 'users']

export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => trackTables(db, TABLES))
  }

  async down() {
    this.defer(async (db) => {
      await untrackTables(db, TABLES)
      if (db.dialect.name.includes('sqlite'))
        await db.rawQuery(`DROP TABLE IF EXISTS ${EPOCHS_TABLE}`)
    })
  }
}
