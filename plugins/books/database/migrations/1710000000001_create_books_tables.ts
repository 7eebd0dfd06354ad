import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Books and their members. Booleans are real booleans on both databases; JSON
 * documents (prefs) are TEXT. Stamps are bigints (unix seconds × 10 000).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('books', (table) => {
      table.increments('id')
      table
        .integer('owner_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      table.string('code', 100).notNullable()
      table.string('description', 2000).notNullable().defaultTo('')
      /** ownerPrefs: title, covers, authorizeMemberBroadcast, ... */
      table.text('owner_prefs').nullable()
      /** fpForm as set by the tables plugin: {id, name, lastModified}. */
      table.text('fp_form').nullable()
      table.boolean('archived').notNullable().defaultTo(false)
      table.boolean('del').notNullable().defaultTo(false)
      /** Media id of the last image posted (cover "last image"), set by the media plugin. */
      table.bigInteger('last_media').notNullable().defaultTo(0)
      /**
       * Live messages created up to `counted_until` (a stamp); newer ones are
       * counted at read time. See services/book_counters_service.ts.
       */
      table.integer('nb_msgs').notNullable().defaultTo(0)
      table.bigInteger('counted_until').notNullable().defaultTo(0)
      /** Changes of the book itself or of its member list (not of its messages). */
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.timestamp('created_at').notNullable()
      table.timestamp('updated_at').nullable()
      table.unique(['owner_id', 'code'])
    })

    this.schema.createTable('book_members', (table) => {
      table.increments('id')
      table
        .integer('book_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('books')
        .onDelete('CASCADE')
      table
        .integer('user_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      /** 'sent' (invited) or 'accepted'; a declined, removed or left member keeps its row with del true. */
      table.string('invite', 16).notNullable()
      table.tinyint('right').notNullable()
      table.integer('invited_by').unsigned().nullable()
      table.text('user_prefs').nullable()
      table.boolean('favorite').notNullable().defaultTo(false)
      table.integer('sort_order').notNullable().defaultTo(0)
      table.bigInteger('last_msg_read').notNullable().defaultTo(0)
      /** Unread messages among those counted (see books.counted_until). */
      table.integer('nb_not_read').notNullable().defaultTo(0)
      table.bigInteger('last_open_at').nullable()
      table.boolean('del').notNullable().defaultTo(false)
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.timestamp('created_at').notNullable()
      table.timestamp('updated_at').nullable()
      table.unique(['book_id', 'user_id'])
      table.index(['user_id', 'sstamp'])
    })

    /** Users who share (or shared) a book with the user; isConfirmed once both accepted one. */
    this.schema.createTable('book_contacts', (table) => {
      table
        .integer('user_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      table
        .integer('contact_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      table.boolean('is_confirmed').notNullable().defaultTo(false)
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.primary(['user_id', 'contact_id'])
    })
  }

  async down() {
    this.schema.dropTable('book_contacts')
    this.schema.dropTable('book_members')
    this.schema.dropTable('books')
  }
}
