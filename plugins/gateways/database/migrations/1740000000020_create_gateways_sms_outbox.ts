import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Outbound SMS (issue 19 item 2): one row per SMS to send, queued for the
 * gateway chosen when it was written, leased to the phone that collects it
 * until the phone confirms it. And the tie of an SMS Gateway for Android
 * device to the gateway number it serves.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('gateways_sms_outbox', (table) => {
      table.increments('id')
      /** The gateway it is queued for; null while no gateway is allowed (the first to collect takes it). */
      table
        .integer('gateway_id')
        .unsigned()
        .nullable()
        .references('id')
        .inTable('gateways_sms')
        .onDelete('SET NULL')
      /** The caller's key: the same key twice is one SMS. */
      table.string('idempotency_key', 191).notNullable().unique()
      /** copy, reminder or invitation. */
      table.string('kind', 16).notNullable()
      /** The recipient, E.164. */
      table.string('phone', 20).notNullable()
      table.text('text').notNullable()
      /** The book it is about (it picks the book's fixed gateway), if any. */
      table.integer('book_id').unsigned().nullable()
      /** queued, leased (handed to a gateway, unconfirmed), sent, delivered or failed. */
      table.string('state', 12).notNullable()
      /** How many times it was handed to a gateway. */
      table.integer('attempts').notNullable().defaultTo(0)
      /** Not handed out before this (epoch ms). */
      table.bigInteger('not_before').notNullable()
      /** While leased: until when the gateway has it (epoch ms), and the collection that leased it. */
      table.bigInteger('lease_until').nullable()
      table.string('lease_token', 32).nullable()
      /** Why it failed (the phone's reason, or unconfirmed). */
      table.string('reason', 255).nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.index(['gateway_id', 'state', 'not_before'])
      table.index(['state', 'lease_until'])
      table.index(['lease_token'])
    })

    this.schema.alterTable('gateways_android_devices', (table) => {
      /** The gateway number this phone serves (gateway:allow --device); null: not tied yet. */
      table
        .integer('gateway_id')
        .unsigned()
        .nullable()
        .references('id')
        .inTable('gateways_sms')
        .onDelete('SET NULL')
    })
  }

  async down() {
    this.schema.alterTable('gateways_android_devices', (table) => {
      table.dropForeign(['gateway_id'])
      table.dropColumn('gateway_id')
    })
    this.schema.dropTable('gateways_sms_outbox')
  }
}
