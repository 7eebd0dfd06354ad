import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'users'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.increments('id')
      table.string('code', 191).notNullable().unique()
      table.string('email', 191).nullable().unique()
      table.string('phone', 64).nullable().unique()
      table.string('password').notNullable()
      table.string('first_name', 191).notNullable().defaultTo('')
      table.string('last_name', 191).notNullable().defaultTo('')
      table.text('prefs').nullable()
      table.text('rights').nullable()
      table.text('colors').nullable()
      table.integer('project_id').notNullable().defaultTo(0)
      table.boolean('is_admin').notNullable().defaultTo(false)
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('uimg_stamp').notNullable().defaultTo(0)
      table.timestamp('last_connection_at').nullable()
      table.timestamp('previous_connection_at').nullable()
      table.timestamp('created_at').notNullable()
      table.timestamp('updated_at').nullable()
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
