import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A disabled account (admin console): no sign-in through any entry point
 * (CredentialService refuses it), and its sessions were revoked when it was
 * disabled. Null = enabled.
 */
export default class extends BaseSchema {
  protected tableName = 'users'

  async up() {
    this.schema.alterTable(this.tableName, (table) => {
      table.timestamp('disabled_at').nullable()
    })
  }

  async down() {
    this.schema.alterTable(this.tableName, (table) => {
      table.dropColumn('disabled_at')
    })
  }
}
