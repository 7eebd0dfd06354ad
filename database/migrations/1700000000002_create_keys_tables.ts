import { BaseSchema } from '@adonisjs/lucid/schema'

/** appkeys, oauthkeys and sesskeys: stored as SHA-256 digests, never in clear. */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('applications', (table) => {
      table.increments('id')
      table.string('name', 191).notNullable()
      table.string('key_hash', 64).notNullable().unique()
      table.timestamp('created_at').notNullable()
      table.timestamp('revoked_at').nullable()
    })

    this.schema.createTable('oauth_keys', (table) => {
      table.increments('id')
      table
        .integer('application_id')
        .unsigned()
        .notNullable()
        .references('applications.id')
        .onDelete('CASCADE')
      table.integer('user_id').unsigned().notNullable().references('users.id').onDelete('CASCADE')
      table.string('key_hash', 64).notNullable().unique()
      table.timestamp('created_at').notNullable()
      table.timestamp('last_used_at').nullable()
      table.timestamp('revoked_at').nullable()
      table.index(['user_id', 'revoked_at'])
    })

    this.schema.createTable('api_sessions', (table) => {
      table.increments('id')
      table.integer('user_id').unsigned().notNullable().references('users.id').onDelete('CASCADE')
      table
        .integer('application_id')
        .unsigned()
        .nullable()
        .references('applications.id')
        .onDelete('SET NULL')
      table
        .integer('oauth_key_id')
        .unsigned()
        .nullable()
        .references('oauth_keys.id')
        .onDelete('SET NULL')
      table.string('key_hash', 64).notNullable().unique()
      table.text('restrictions').nullable()
      table.string('revoked_reason', 64).nullable()
      table.timestamp('created_at').notNullable()
      table.timestamp('last_used_at').nullable()
      table.timestamp('expires_at').nullable()
      table.timestamp('revoked_at').nullable()
      table.index(['user_id', 'revoked_at'])
    })

    /** o_u (delegate) may act on behalf of u_c (user): chatbots, integrations. */
    this.schema.createTable('user_delegations', (table) => {
      table.increments('id')
      table.integer('user_id').unsigned().notNullable().references('users.id').onDelete('CASCADE')
      table
        .integer('delegate_id')
        .unsigned()
        .notNullable()
        .references('users.id')
        .onDelete('CASCADE')
      table.timestamp('created_at').notNullable()
      table.unique(['delegate_id', 'user_id'])
    })
  }

  async down() {
    this.schema.dropTable('user_delegations')
    this.schema.dropTable('api_sessions')
    this.schema.dropTable('oauth_keys')
    this.schema.dropTable('applications')
  }
}
