import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The kernel outbox (docs/outbox.md): one row per delivery to the outside
 * (webhooks now; push, SMS and e-mail later), written in the transaction of
 * the change that causes it, and one row per attempt. Times are epoch
 * milliseconds, compared the same way on SQLite and MySQL.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('outbox_deliveries', (table) => {
      table.bigIncrements('id')
      table.string('channel', 40).notNullable()
      table.string('recipient', 191).notNullable()
      table.string('idempotency_key', 191).notNullable()
      table.string('order_key', 191).nullable()
      table.string('event_type', 64).notNullable()
      table.text('payload', 'mediumtext').notNullable()
      /** pending | sending | delivered | failed | cancelled */
      table.string('state', 16).notNullable()
      table.integer('attempts').notNullable().defaultTo(0)
      table.integer('max_attempts').notNullable()
      table.bigInteger('next_attempt_at').notNullable()
      /** While `sending`: when a worker's claim lapses (a killed worker's delivery is taken back). */
      table.bigInteger('lease_until').nullable()
      table.integer('last_status').nullable()
      table.string('last_error', 500).nullable()
      table.integer('last_duration_ms').nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.bigInteger('finished_at').nullable()
      table.unique(['channel', 'idempotency_key'])
      table.index(['state', 'next_attempt_at'])
      table.index(['order_key', 'id'])
      table.index(['channel', 'recipient', 'id'])
      table.index(['finished_at'])
    })
    this.schema.createTable('outbox_attempts', (table) => {
      table.bigIncrements('id')
      table.bigInteger('delivery_id').unsigned().notNullable()
      table.integer('attempt').notNullable()
      table.string('outcome', 16).notNullable()
      table.integer('status').nullable()
      table.string('response', 1024).nullable()
      table.string('error', 500).nullable()
      table.integer('duration_ms').notNullable()
      table.bigInteger('started_at').notNullable()
      table.index(['delivery_id', 'attempt'])
    })
  }

  async down() {
    this.schema.dropTable('outbox_attempts')
    this.schema.dropTable('outbox_deliveries')
  }
}
