import { BaseSchema } from '@adonisjs/lucid/schema'
import { trackTables, untrackTables } from '#core/read_cache_epochs'

/**
 * SQLite only: epochs of the books tables readCached reads (book resolution and membership on
 * every book operation), bumped by triggers (app/core/read_cache_epochs.ts).
 */
const TABLES = ['books', 'book_members', 'book_contacts']

export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => trackTables(db, TABLES))
  }

  async down() {
    this.defer(async (db) => untrackTables(db, TABLES))
  }
}
