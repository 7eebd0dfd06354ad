import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The audit log (docs/audit.md): one row per administrative change, written
 * in the transaction of the change. Times are epoch milliseconds (compared
 * the same way on SQLite and MySQL). The indexes serve the console's filters
 * (by actor, by kind, newest first) and the retention's delete by age.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('audit_log', (table) => {
      table.bigIncrements('id')
      table.bigInteger('created_at').notNullable()
      /** Null for "system" (an ace command, a job). */
      table.integer('actor_id').unsigned().nullable()
      /** The user's code, or `system` / `ace <command>`. */
      table.string('actor_code', 191).notNullable()
      /** The request's address, or `cli` for an ace command. */
      table.string('address', 64).notNullable()
      /** A stable dotted name: user.created, book.archived, webhook.updated... */
      table.string('kind', 64).notNullable()
      table.string('target_type', 32).notNullable()
      table.string('target_id', 64).nullable()
      table.string('target_label', 191).notNullable()
      /** JSON: { field: { from, to } } or { field: { changed: true } } for secrets. */
      table.text('changes').notNullable()
      table.index(['created_at'])
      table.index(['actor_id', 'id'])
      table.index(['kind', 'id'])
      table.index(['target_type', 'target_id'])
    })
  }

  async down() {
    this.schema.dropTable('audit_log')
  }
}
