import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Runtime overrides of declared settings (app/core/settings, docs/settings.md),
 * changed from the console's Settings page: one row per setting whose value is
 * not its default. `value_json` holds the value as JSON (a boolean, a number
 * or a string). Settings fixed by an environment variable never have a row.
 */
export default class extends BaseSchema {
  protected tableName = 'settings'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.string('name', 191).primary()
      table.text('value_json').notNullable()
      table.integer('updated_by').unsigned().nullable()
      table.timestamp('updated_at').notNullable()
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
