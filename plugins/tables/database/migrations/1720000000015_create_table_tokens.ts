import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Row and form tokens (issue 21 item 5, services/table_tokens_service.ts): a token names one row
 * (getTableRowByToken, updateTableRowByToken) or one view as a form (getNewTableRowByViewToken,
 * addNewTableRowByViewToken). Only the SHA-256 digest of the token is kept. A deleted table
 * takes its tokens along; a deleted view or row leaves its token naming nothing (answered
 * TOKEN_INVALID).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('table_tokens', (table) => {
      table.increments('id')
      table.string('token_hash', 64).notNullable().unique()
      table
        .integer('category_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_categories')
        .onDelete('CASCADE')
      table.integer('view_id').unsigned().nullable()
      table.bigInteger('row_id').unsigned().nullable()
      table.boolean('read_only').notNullable().defaultTo(false)
      /** JSON list of the field ids a form requires (form tokens). */
      table.text('required_fields').nullable()
      table.integer('creator_id').unsigned().notNullable()
      table.bigInteger('created_at').notNullable().defaultTo(0)
      /** Unix seconds; null: never expires. */
      table.bigInteger('expires_at').nullable()
      table.bigInteger('revoked_at').nullable()
      table.index(['category_id', 'id'], 'table_tokens_category_idx')
    })
  }

  async down() {
    this.schema.dropTable('table_tokens')
  }
}
