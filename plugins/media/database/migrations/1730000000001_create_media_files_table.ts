import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Every stored file: where it is (storage_key on the drive disk, a
 * server-made name), what it is (sniffed from its content), and what it is
 * attached to (a message, a file cell, a profile or a cover). The client's
 * file name is kept only as origin_name.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('media_files', (table) => {
      table.increments('id')
      table.string('uuid', 36).notNullable().unique()
      table.string('intern_name', 64).notNullable().unique()
      table.string('storage_key', 191).notNullable()
      table.string('origin_name', 255).notNullable().defaultTo('')
      table.string('ext', 16).notNullable()
      table.string('mime', 100).notNullable()
      /** image, audio, video or doc; the wire `type` is 'doc' for doc, 'media' otherwise. */
      table.string('kind', 8).notNullable()
      table.bigInteger('size').notNullable()
      table.integer('width').nullable()
      table.integer('height').nullable()
      /** message, cell, profile or cover. */
      table.string('purpose', 8).notNullable()
      table
        .integer('owner_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('users')
        .onDelete('CASCADE')
      table
        .integer('book_id')
        .unsigned()
        .nullable()
        .references('id')
        .inTable('books')
        .onDelete('CASCADE')
      table.bigInteger('smid').nullable()
      table.bigInteger('row_id').nullable()
      table.integer('field_id').nullable()
      table.boolean('del').notNullable().defaultTo(false)
      /** Unix seconds. */
      table.bigInteger('created').notNullable()
      // A message's n-th image or document (mdc) is its rank by id: no stored counter to race on.
      table.index(['smid', 'id'])
      table.index(['row_id', 'field_id'])
      table.index(['book_id', 'kind', 'id'])
      table.index(['owner_id', 'purpose', 'id'])
    })
  }

  async down() {
    this.schema.dropTable('media_files')
  }
}
