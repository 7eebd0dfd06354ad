import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A delivery is claimable only while no earlier one of its order key is pending or being sent
 * (docs/outbox.md, "Order per key"). With (order_key, id) that check walked every earlier
 * delivery of the key, finished ones included: a webhook's key (a subscription and a row) gathers
 * one per change of the row, and a claim over a backlog checked each candidate's whole history.
 * With the state in the index it is two short range seeks.
 *
 * (state, recipient, next_attempt_at): when some recipients have no room, a claim reads the
 * recipients with pending rows (one seek each) and one range per recipient with room, instead of
 * every due row of those without (docs/outbox.md, "Room").
 *
 * lease_token's own index goes: a claim that lost rows to another process reads its token among
 * the ids it asked for (the primary key), and every staged row paid for the index (eight b-trees
 * written per delivery before, seven now).
 */
export default class extends BaseSchema {
  protected tableName = 'outbox_deliveries'

  async up() {
    this.schema.alterTable(this.tableName, (table) => {
      table.index(['order_key', 'state', 'id'])
      table.dropIndex(['order_key', 'id'])
      table.index(['state', 'recipient', 'next_attempt_at'])
      table.dropIndex(['lease_token'])
    })
  }

  async down() {
    this.schema.alterTable(this.tableName, (table) => {
      table.index(['order_key', 'id'])
      table.dropIndex(['order_key', 'state', 'id'])
      table.dropIndex(['state', 'recipient', 'next_attempt_at'])
      table.index(['lease_token'])
    })
  }
}
