import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A field's fixed_code is made from its name (lib/fixed_code.ts), so two tables may each have a
 * field "attachments": the code is unique within its table, no longer across every table.
 * Existing codes (random, "f" + 12 hex digits) are kept as they are: a fixed code never changes
 * once a client may have stored it.
 */
export default class extends BaseSchema {
  protected tableName = 'table_fields'

  async up() {
    this.schema.alterTable(this.tableName, (table) => {
      table.dropUnique(['fixed_code'])
      table.unique(['category_id', 'fixed_code'])
    })
  }

  async down() {
    this.schema.alterTable(this.tableName, (table) => {
      table.dropUnique(['category_id', 'fixed_code'])
      table.unique(['fixed_code'])
    })
  }
}
