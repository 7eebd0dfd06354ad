import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Tables of the authentication service. Times are unix milliseconds
 * (bigint) taken from the service's clock, so expiry compares the same way on
 * SQLite and MariaDB and tests can move time. Tokens are stored as SHA-256
 * digests; TOTP secrets encrypted (AES-256-GCM).
 */
export default class extends BaseSchema {
  async up() {
    /** Auth-side facts about a kernel user: its public uuid (`user.id` on the wire) and its second factor. */
    this.schema.createTable('auth_users', (table) => {
      table.integer('user_id').unsigned().primary().references('users.id').onDelete('CASCADE')
      table.string('uuid', 36).notNullable().unique()
      table.text('totp_secret').nullable()
      table.bigInteger('totp_enabled_at').nullable()
      /** Last accepted TOTP time step: a code of this step or earlier is refused (no replay). */
      table.bigInteger('totp_last_step').nullable()
      /** null follows AUTH_TOTP_POLICY; 'required' or 'optional' override it for this user. */
      table.string('totp_policy', 16).nullable()
      table.boolean('must_change_password').notNullable().defaultTo(false)
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
    })

    this.schema.createTable('auth_clients', (table) => {
      table.increments('id')
      table.string('client_id', 191).notNullable().unique()
      table.string('name', 191).notNullable()
      /** JSON array of exact redirect URIs. */
      table.text('redirect_uris').notNullable()
      table.bigInteger('created_at').notNullable()
    })

    /** An OIDC-style authorization request waiting for its login to complete. */
    this.schema.createTable('auth_requests', (table) => {
      table.increments('id')
      table.string('public_id', 64).notNullable().unique()
      table.string('client_id', 191).notNullable()
      table.text('redirect_uri').notNullable()
      table.text('state').nullable()
      table.text('nonce').nullable()
      table.string('response_mode', 16).notNullable()
      /** JSON object of the extra parameters, answered back as passThroughParameters. */
      table.text('pass_through').notNullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('expires_at').notNullable()
      table.bigInteger('consumed_at').nullable()
    })

    /** One login of one device: a refresh-token chain; access tokens name it as `sid`. */
    this.schema.createTable('auth_sessions', (table) => {
      table.increments('id')
      table.string('public_id', 36).notNullable().unique()
      table.integer('user_id').unsigned().notNullable().references('users.id').onDelete('CASCADE')
      table.string('client_id', 191).nullable()
      table.string('ip', 64).nullable()
      table.string('user_agent', 255).nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('last_refreshed_at').nullable()
      table.bigInteger('revoked_at').nullable()
      table.string('revoked_reason', 64).nullable()
      table.index(['user_id', 'revoked_at'])
    })

    this.schema.createTable('auth_refresh_tokens', (table) => {
      table.increments('id')
      table
        .integer('session_id')
        .unsigned()
        .notNullable()
        .references('auth_sessions.id')
        .onDelete('CASCADE')
      table.string('token_hash', 64).notNullable().unique()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('expires_at').notNullable()
      /** Set when exchanged: presenting it again is reuse and revokes the session. */
      table.bigInteger('used_at').nullable()
      table.index(['session_id'])
    })

    /**
     * A login waiting for a second step: TOTP setup (setup_token), TOTP code
     * (login_token) or a forced password change. No foreign key on user_id on
     * purpose: a token whose user was deleted must answer "user gone", not
     * vanish.
     */
    this.schema.createTable('auth_pending_logins', (table) => {
      table.increments('id')
      table.string('token_hash', 64).notNullable().unique()
      table.string('kind', 24).notNullable()
      table.integer('user_id').unsigned().notNullable()
      table.integer('request_id').unsigned().nullable()
      table.text('totp_secret').nullable()
      table.integer('attempts').notNullable().defaultTo(0)
      table.bigInteger('created_at').notNullable()
      table.bigInteger('expires_at').notNullable()
      table.bigInteger('consumed_at').nullable()
      table.index(['expires_at'])
    })
  }

  async down() {
    this.schema.dropTable('auth_pending_logins')
    this.schema.dropTable('auth_refresh_tokens')
    this.schema.dropTable('auth_sessions')
    this.schema.dropTable('auth_requests')
    this.schema.dropTable('auth_clients')
    this.schema.dropTable('auth_users')
  }
}
