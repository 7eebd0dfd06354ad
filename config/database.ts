import { existsSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import app from '@adonisjs/core/services/app'
import { defineConfig } from '@adonisjs/lucid'
import env from '#start/env'
import plugins from '#config/plugins'
import { dataDir } from '#config/quire'
import { attachCheckpointer } from '#core/sqlite_checkpointer'
import { SqliteShadowTables } from '#core/sqlite_shadow_tables'

/** Core migrations first, then each enabled plugin's, in plugin order. */
const migrationPaths = [
  'database/migrations',
  ...plugins.enabled
    .map((id) => `plugins/${id}/database/migrations`)
    .filter((path) => existsSync(app.makePath(path))),
]

const sqliteFile = (() => {
  const file = env.get('SQLITE_FILE', 'quire.sqlite')
  return isAbsolute(file) ? file : join(dataDir, file)
})()

const dbConfig = defineConfig({
  connection: env.get('DB_CONNECTION', 'sqlite'),
  connections: {
    sqlite: {
      client: 'better-sqlite3',
      connection: { filename: sqliteFile },
      useNullAsDefault: true,
      migrations: { naturalSort: true, paths: migrationPaths },
      // migration:fresh: a text index's FTS5 shadow tables go with the index, not one by one.
      wipe: { ignoreTables: new SqliteShadowTables(sqliteFile) },
      pool: {
        afterCreate: (conn: any, done: (err: Error | null, conn: any) => void) => {
          // WAL lets readers proceed while a writer commits; foreign keys are off by default in SQLite.
          conn.pragma('journal_mode = WAL')
          conn.pragma('synchronous = NORMAL')
          conn.pragma('foreign_keys = ON')
          conn.pragma('busy_timeout = 5000')
          // Checkpoints by a worker thread of the process, not inside COMMIT (app/core/sqlite_checkpointer.ts).
          attachCheckpointer(conn)
          done(null, conn)
        },
      },
    },
    mysql: {
      client: 'mysql2',
      connection: {
        host: env.get('DB_HOST', '127.0.0.1'),
        port: env.get('DB_PORT', 3306),
        user: env.get('DB_USER', 'root'),
        password: env.get('DB_PASSWORD', ''),
        database: env.get('DB_DATABASE', 'quire'),
        charset: 'utf8mb4',
        supportBigNumbers: true,
        // Stamps and ids fit in 2^53; answer them as JSON numbers, not strings.
        bigNumberStrings: false,
      },
      pool: { min: 0, max: 20 },
      migrations: { naturalSort: true, paths: migrationPaths },
    },
  },
})

export default dbConfig
