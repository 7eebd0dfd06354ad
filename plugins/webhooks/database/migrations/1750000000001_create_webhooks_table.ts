import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Webhook subscriptions: one URL receiving some event types of one table
 * (category_id set) or one book (category_id null). Secrets are stored
 * encrypted with APP_KEY (signing needs them in clear; they are answered
 * once, at creation and rotation). Times are epoch milliseconds.
 */
export default class extends BaseSchema {
  protected tableName = 'webhooks'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.increments('id')
      table.integer('book_id').unsigned().notNullable()
      table.integer('category_id').unsigned().nullable()
      table.string('url', 2048).notNullable()
      /** Comma list of event types. */
      table.string('events', 255).notNullable()
      /** Comma list of field ids; empty: every field. */
      table.string('field_ids', 1024).notNullable().defaultTo('')
      table.string('description', 500).notNullable().defaultTo('')
      table.boolean('active').notNullable().defaultTo(true)
      /** Set by updateTable's triggerUpdateUrl: the table's own row webhook. */
      table.boolean('is_trigger_url').notNullable().defaultTo(false)
      table.text('secret').notNullable()
      table.text('previous_secret').nullable()
      table.bigInteger('previous_until').nullable()
      table.integer('created_by').unsigned().notNullable()
      table.integer('consecutive_failures').notNullable().defaultTo(0)
      table.string('disabled_reason', 500).nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.index(['category_id', 'active'])
      table.index(['book_id', 'active'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
