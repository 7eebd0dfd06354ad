import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Invitations to an e-mail address or phone number that no account has
 * (inviteMember): one row per book and address, until an account with the
 * address is created (the row becomes a book_members invitation) or it
 * expires. The link's token is kept as its SHA-256 only.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('book_address_invitations', (table) => {
      table.increments('id')
      table
        .integer('book_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('books')
        .onDelete('CASCADE')
      /** 'email' (lower-cased) or 'phone' (digits and a leading +, as users.phone is stored). */
      table.string('kind', 8).notNullable()
      table.string('address', 191).notNullable()
      table.string('token_hash', 64).notNullable().unique()
      table.tinyint('right').notNullable()
      table
        .integer('invited_by')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      /** Epoch ms. */
      table.bigInteger('expires_at').notNullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.unique(['book_id', 'address'])
      table.index(['address'])
    })
  }

  async down() {
    this.schema.dropTable('book_address_invitations')
  }
}
