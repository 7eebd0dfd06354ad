import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Messages and calendar events. The indexes serve the hot reads without a
 * per-row query: paging newest-first (book_id, del, smid), deltas
 * (book_id, sstamp), counters' recent tail (book_id, cstamp), and events by
 * date (book_id, event_start).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('book_messages', (table) => {
      table.bigIncrements('smid')
      table
        .integer('book_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('books')
        .onDelete('CASCADE')
      table.string('uuid', 64).notNullable()
      table
        .integer('creator_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      table.integer('pid').notNullable().defaultTo(0)
      table.text('msg', 'mediumtext').notNullable()
      table.text('msg_body', 'mediumtext').nullable()
      table.text('msg_body_html', 'mediumtext').nullable()
      table.string('msg_type', 16).notNullable().defaultTo('m')
      table.string('msg_method', 32).notNullable().defaultTo('')
      table.string('msg_color', 32).notNullable().defaultTo('')
      table.integer('nb_comments').notNullable().defaultTo(0)
      table.bigInteger('last_comment_id').notNullable().defaultTo(0)
      table.integer('nb_medias').notNullable().defaultTo(0)
      table.integer('nb_email_cids').notNullable().defaultTo(0)
      table.integer('nb_docs').notNullable().defaultTo(0)
      /** Array of media (2.5), maintained by the media plugin through MessageWriter.setAttachments. */
      table.text('medias').nullable()
      table.boolean('has_event').notNullable().defaultTo(false)
      table.boolean('del').notNullable().defaultTo(false)
      /** Unix seconds. */
      table.bigInteger('created').notNullable()
      table.bigInteger('last_modified').notNullable()
      /** Stamp of the creation (never changes): the counters' tail is `cstamp > books.counted_until`. */
      table.bigInteger('cstamp').notNullable()
      table.bigInteger('sstamp').notNullable()
      table.unique(['book_id', 'uuid'])
      table.index(['book_id', 'del', 'smid'])
      table.index(['book_id', 'sstamp'])
      table.index(['book_id', 'cstamp'])
    })

    this.schema.createTable('book_events', (table) => {
      table.increments('id')
      table
        .integer('book_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('books')
        .onDelete('CASCADE')
      table
        .bigInteger('smid')
        .unsigned()
        .notNullable()
        .unique()
        .references('smid')
        .inTable('book_messages')
        .onDelete('CASCADE')
      table
        .integer('creator_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      /** Unix seconds (UTC). */
      table.bigInteger('event_start').notNullable()
      table.bigInteger('event_end').notNullable()
      table.string('event_timezone', 64).notNullable().defaultTo('UTC')
      table.boolean('all_day').notNullable().defaultTo(false)
      table.boolean('is_busy').notNullable().defaultTo(false)
      table.text('reminder_data').nullable()
      table.boolean('del').notNullable().defaultTo(false)
      table.bigInteger('created').notNullable()
      table.bigInteger('last_modified').notNullable()
      table.bigInteger('sstamp').notNullable()
      table.index(['book_id', 'event_start'])
      table.index(['book_id', 'sstamp'])
    })

    this.schema.createTable('book_event_participants', (table) => {
      table
        .integer('event_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('book_events')
        .onDelete('CASCADE')
      table
        .integer('user_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      table.primary(['event_id', 'user_id'])
      table.index(['user_id'])
    })
  }

  async down() {
    this.schema.dropTable('book_event_participants')
    this.schema.dropTable('book_events')
    this.schema.dropTable('book_messages')
  }
}
