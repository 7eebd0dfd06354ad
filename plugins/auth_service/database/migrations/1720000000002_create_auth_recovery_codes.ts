import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * One-time recovery codes of a user with TOTP: ten given at enrolment (and
 * on regeneration), each usable once instead of a TOTP code. Stored as an
 * HMAC-SHA256 keyed with a key derived from APP_KEY (a database copy alone
 * cannot test guesses). Times are unix milliseconds, like the other auth tables.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('auth_recovery_codes', (table) => {
      table.increments('id')
      table.integer('user_id').unsigned().notNullable().references('users.id').onDelete('CASCADE')
      table.string('code_hash', 64).notNullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('used_at').nullable()
      table.unique(['user_id', 'code_hash'])
    })
  }

  async down() {
    this.schema.dropTable('auth_recovery_codes')
  }
}
