import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The gateways plugin's tables: SMS gateways (one row per phone number,
 * pending until an administrator allows it, with its one live session) and
 * push devices (updatePushId).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('gateways_sms', (table) => {
      table.increments('id')
      /** The gateway's number, E.164. */
      table.string('phone', 20).notNullable().unique()
      /** Set by an administrator (gateway:allow, the console); false: a pending registration. */
      table.boolean('allowed').notNullable().defaultTo(false)
      table.timestamp('allowed_at').nullable()
      /** The book the administrator fixed for it (b_o, b_c), if any. */
      table.string('book_owner', 191).nullable()
      table.string('book_code', 191).nullable()
      /** The last registration: its appname, address, time and the book it asked for. */
      table.string('appname', 191).notNullable().defaultTo('')
      table.string('requested_ip', 64).nullable()
      table.timestamp('requested_at').nullable()
      table.string('requested_book_owner', 191).nullable()
      table.string('requested_book_code', 191).nullable()
      /** The live session (SHA-256 of its sesskey); null when none (never registered, or unregistered). */
      table.string('key_hash', 64).nullable().unique()
      /** The book the live session was registered for (the requested one, when allowed). */
      table.string('session_book_owner', 191).nullable()
      table.string('session_book_code', 191).nullable()
      table.timestamp('registered_at').nullable()
      table.timestamp('last_used_at').nullable()
      table.timestamp('created_at').notNullable()
    })

    this.schema.createTable('gateways_push_devices', (table) => {
      /** The deviceID of updatePushId. */
      table.increments('id')
      table
        .integer('user_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      /** gcm_rid, gcm_nk, ios_dt, ios_dt_v2, bb_dt or win_uri. */
      table.string('device_type', 16).notNullable()
      table.text('registration_id').notNullable()
      /** SHA-256 of registration_id: one row per device token (a text column cannot be unique everywhere). */
      table.string('registration_hash', 64).notNullable()
      table.boolean('active').notNullable().defaultTo(true)
      table.integer('project_id').notNullable().defaultTo(0)
      table.timestamp('created_at').notNullable()
      table.timestamp('updated_at').notNullable()
      table.unique(['device_type', 'registration_hash'])
      table.index(['user_id', 'active'])
    })
  }

  async down() {
    this.schema.dropTable('gateways_push_devices')
    this.schema.dropTable('gateways_sms')
  }
}
