import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The stamp allocator's reservation: stamps are handed out from memory (or
 * Redis) and never go below `reserved_until` of the previous run, even if the
 * clock moved backwards.
 */
export default class extends BaseSchema {
  protected tableName = 'core_stamp_state'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.integer('id').primary()
      table.bigInteger('reserved_until').notNullable()
    })
    this.defer(async (db) => {
      await db.table(this.tableName).insert({ id: 1, reserved_until: 0 })
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
