import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The outbox pump's claim for the recipients whose sends just ended (the others
 * still have no room): one index range per recipient, its due rows in order,
 * instead of reading every due row of every recipient (docs/outbox.md, "Room").
 */
export default class extends BaseSchema {
  protected tableName = 'outbox_deliveries'

  async up() {
    this.schema.alterTable(this.tableName, (table) => {
      table.index(
        ['state', 'recipient', 'next_attempt_at'],
        'outbox_deliveries_recipient_due_index'
      )
    })
  }

  async down() {
    this.schema.alterTable(this.tableName, (table) => {
      table.dropIndex(
        ['state', 'recipient', 'next_attempt_at'],
        'outbox_deliveries_recipient_due_index'
      )
    })
  }
}
