import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Phones running the SMS Gateway for Android app in private-server mode,
 * registered through its device API (POST /api/mobile/v1/device).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('gateways_android_devices', (table) => {
      /** The device id the app keeps (21 URL-safe characters, as the app's own server makes). */
      table.string('id', 21).primary()
      table.string('name', 128).notNullable().defaultTo('')
      /** The app's FCM token (PATCH /device updates it); null when the app has none. */
      table.string('push_token', 256).nullable()
      /** SHA-256 of the bearer token the app sends on every later request. */
      table.string('token_hash', 64).notNullable().unique()
      /** The login and password the app shows for the server's third-party API (password hashed). */
      table.string('login', 16).notNullable()
      table.string('password_hash', 64).notNullable()
      table.timestamp('created_at').notNullable()
      table.timestamp('updated_at').notNullable()
    })
  }

  async down() {
    this.schema.dropTable('gateways_android_devices')
  }
}
