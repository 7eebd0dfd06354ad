import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Cell history (issue 21 items 1/2): one entry per field a write changed,
 * recorded in the write's own transaction (services/history_service.ts).
 * No foreign key to table_fields: an entry outlives its field (a rollback
 * across a deleted field must be refused, not silently lose the entries);
 * a deleted table takes its history along.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('table_cell_history', (table) => {
      table.bigIncrements('id')
      table
        .integer('category_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_categories')
        .onDelete('CASCADE')
      table.bigInteger('row_id').unsigned().notNullable()
      table.integer('field_id').unsigned().notNullable()
      // The field's type when written: a rollback across a type change is refused.
      table.string('field_type', 32).notNullable()
      // One id per write (a bulk write's rows share it: rollBackBeforeChange scope=change).
      table.string('write_id', 32).notNullable()
      table.string('action', 16).notNullable()
      table.string('operation', 64).notNullable()
      table.integer('user_id').unsigned().nullable()
      table.string('user_code', 191).notNullable()
      // The sesskey holder when acting on behalf of user_code (a delegate, the console's administrator).
      table.integer('principal_id').unsigned().nullable()
      table.string('principal_code', 191).nullable()
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('created_at').notNullable().defaultTo(0)
      // LONGTEXT on MySQL: a cell's value may be far past TEXT's 64 KiB (a mediumtext cell).
      table.text('old_value', 'longtext').nullable()
      table.text('new_value', 'longtext').nullable()
      // getRowHistory and activity cells (per row, newest first; counts per row).
      table.index(['category_id', 'row_id', 'id'], 'table_cell_history_row_idx')
      // getRowHistory with fieldId.
      table.index(['category_id', 'row_id', 'field_id', 'id'], 'table_cell_history_cell_idx')
      // rollBackBeforeChange scope=change: the rows one write touched.
      table.index(['write_id'], 'table_cell_history_write_idx')
      // Retention by age (TABLES_HISTORY_DAYS).
      table.index(['created_at'], 'table_cell_history_age_idx')
    })
  }

  async down() {
    this.schema.dropTable('table_cell_history')
  }
}
