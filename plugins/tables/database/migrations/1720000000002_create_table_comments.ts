import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Comment threads on cells of `comments` fields (docs/spec/service-interface.md 2.8), and each user's
 * read position per cell (summary.totalUnread, comments[].ur). A deleted
 * table or field takes its comments along (foreign keys); a deleted row's
 * comments are removed by the row delete.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('table_comments', (table) => {
      table.bigIncrements('id')
      table
        .integer('category_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_categories')
        .onDelete('CASCADE')
      table
        .integer('field_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_fields')
        .onDelete('CASCADE')
      table.bigInteger('row_id').unsigned().notNullable()
      table.integer('user_id').unsigned().nullable()
      table.string('user_code', 191).notNullable()
      table.text('text').notNullable()
      table.text('action').nullable()
      table.bigInteger('mid').nullable()
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('created_at').notNullable().defaultTo(0)
      table.bigInteger('updated_at').notNullable().defaultTo(0)
      table.index(['category_id', 'row_id', 'field_id', 'id'], 'table_comments_cell_idx')
    })

    this.schema.createTable('table_comment_reads', (table) => {
      table.integer('user_id').unsigned().notNullable()
      table
        .integer('field_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_fields')
        .onDelete('CASCADE')
      table.bigInteger('row_id').unsigned().notNullable()
      table.bigInteger('last_read_id').notNullable().defaultTo(0)
      table.primary(['user_id', 'field_id', 'row_id'])
    })
  }

  async down() {
    this.schema.dropTable('table_comment_reads')
    this.schema.dropTable('table_comments')
  }
}
