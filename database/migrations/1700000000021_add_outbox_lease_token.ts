import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The outbox's pump claims due deliveries in batches with one conditional
 * UPDATE; when several processes claim at once, the token each claim writes
 * tells it which of the rows it asked for it won (docs/outbox.md, "Sending").
 */
export default class extends BaseSchema {
  protected tableName = 'outbox_deliveries'

  async up() {
    this.schema.alterTable(this.tableName, (table) => {
      table.string('lease_token', 36).nullable()
      table.index(['lease_token'])
    })
  }

  async down() {
    this.schema.alterTable(this.tableName, (table) => {
      table.dropIndex(['lease_token'])
      table.dropColumn('lease_token')
    })
  }
}
