import { BaseSchema } from '@adonisjs/lucid/schema'
import { trackTables, untrackTables } from '#core/read_cache_epochs'

/**
 * SQLite only: epochs of the metadata tables readCached reads (a category's head on every table
 * operation), bumped by triggers (app/core/read_cache_epochs.ts).
 */
const TABLES = ['table_categories', 'table_forms']

export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => trackTables(db, TABLES))
  }

  async down() {
    this.defer(async (db) => untrackTables(db, TABLES))
  }
}
