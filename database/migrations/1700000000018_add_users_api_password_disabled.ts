import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A user with a second factor may turn off password sign-in on api.php
 * (the admin console's Account page): createOauthkey with a password then
 * answers PASSWORD_SIGN_IN_DISABLED, and the user's oauthkeys are made in the
 * console instead. On the kernel's table because createOauthkey (kernel)
 * checks it.
 */
export default class extends BaseSchema {
  protected tableName = 'users'

  async up() {
    this.schema.alterTable(this.tableName, (table) => {
      table.boolean('api_password_disabled').notNullable().defaultTo(false)
    })
  }

  async down() {
    this.schema.alterTable(this.tableName, (table) => {
      table.dropColumn('api_password_disabled')
    })
  }
}
