import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Inbound e-mail: one row per message received (SMTP listener, relay
 * webhook, mail:ingest), stored, duplicate or refused, for the console.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('gateways_mail_in_log', (table) => {
      table.bigIncrements('id')
      table.timestamp('received_at').notNullable()
      /** smtp, http or cli. */
      table.string('source', 8).notNullable()
      /** The From address (lowercase), when the message could be read. */
      table.string('sender', 320).nullable()
      /** The book address the message was for (the envelope's, else its headers'). */
      table.string('recipient', 320).nullable()
      table.string('message_id', 998).nullable()
      table.string('subject', 255).nullable()
      table.integer('size').notNullable().defaultTo(0)
      /** stored, duplicate or refused. */
      table.string('outcome', 16).notNullable()
      /** The refusal's code (MAIL_...), null when stored. */
      table.string('code', 40).nullable()
      table.string('reason', 500).nullable()
      table.bigInteger('book_id').nullable()
      /** The message stored (or, for a duplicate, the one stored first). */
      table.bigInteger('smid').nullable()
      /**
       * SHA-256 of the book and the Message-ID (of the raw bytes when there is
       * none), on stored rows only: the same message twice is stored once.
       */
      table.string('dedupe_key', 64).nullable().unique()
      table.index(['received_at'])
      table.index(['outcome', 'id'])
    })
  }

  async down() {
    this.schema.dropTable('gateways_mail_in_log')
  }
}
