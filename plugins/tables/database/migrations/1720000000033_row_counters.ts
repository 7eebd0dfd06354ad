import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Counts kept by triggers (services/row_counters.ts): per row table, per counter (0 = every
 * row, else a saved view's id), per bucket of `ord` units (BUCKET_WIDTH), how many rows the counter's
 * predicate holds. MariaDB's triggers append deltas to table_count_log (no row lock shared by
 * concurrent writers); reads add them up and fold them into table_counts now and then.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('table_counters', (table) => {
      table.bigInteger('category_id').notNullable()
      table.bigInteger('counter').notNullable()
      // The predicate its triggers evaluate, as they were made: a read checks it is today's.
      table.text('signature').notNullable()
      // The row table's columns the predicate reads (comma list): dropped with any of them.
      table.text('columns').notNullable()
      table.primary(['category_id', 'counter'])
    })
    this.schema.createTable('table_counts', (table) => {
      table.bigInteger('category_id').notNullable()
      table.bigInteger('counter').notNullable()
      table.bigInteger('bucket').notNullable()
      table.bigInteger('n').notNullable().defaultTo(0)
      table.primary(['category_id', 'counter', 'bucket'])
    })
    this.schema.createTable('table_count_log', (table) => {
      table.bigInteger('category_id').notNullable()
      table.bigInteger('counter').notNullable()
      // UUID_SHORT(), not AUTO_INCREMENT: a trigger's INSERT ... SELECT would take the table's
      // AUTO-INC lock until the end of the writing statement, and two bulk writes then deadlock
      // on it (ER_AUTOINC_READ_FAILED under 8 concurrent bulk inserts).
      table.bigInteger('id').unsigned().notNullable()
      table.bigInteger('bucket').notNullable()
      table.integer('n').notNullable()
      // Clustered by counter: a read sums its counter's entries without a second index, which
      // every entry would otherwise also write.
      table.primary(['category_id', 'counter', 'id'])
    })
  }

  async down() {
    this.schema.dropTableIfExists('table_count_log')
    this.schema.dropTableIfExists('table_counts')
    this.schema.dropTableIfExists('table_counters')
  }
}
