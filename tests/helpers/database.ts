import { rm } from 'node:fs/promises'
import db from '@adonisjs/lucid/services/db'
import testUtils from '@adonisjs/core/services/test_utils'

/** Whether the suite runs on MySQL/MariaDB (DB_CONNECTION=mysql) rather than the embedded SQLite. */
export const onMysql = () => db.primaryConnectionName === 'mysql'

/** Whether Redis is configured for this run (REDIS_HOST set). */
export const hasRedis = () => Boolean(process.env.REDIS_HOST)

/**
 * A fresh, migrated database for the run: the SQLite file is deleted, or every
 * MySQL table dropped, then all migrations (core and plugins) run.
 */
export async function freshDatabase() {
  if (onMysql()) {
    await db.connection().dialect.dropAllTables()
  } else {
    const file = (db.getRawConnection('sqlite')?.config.connection as { filename: string }).filename
    await db.manager.closeAll()
    for (const suffix of ['', '-wal', '-shm']) await rm(`${file}${suffix}`, { force: true })
  }
  await testUtils.db().migrate()
}

/**
 * Forgets what earlier runs left in Redis under this run's prefix (limiter
 * counters, stamp counters, queues), so runs do not influence each other.
 */
export async function freshRedis() {
  if (!hasRedis()) return
  const { default: redis } = await import('@adonisjs/redis/services/main')
  const connection = redis.connection()
  const prefix = process.env.REDIS_PREFIX ?? 'quire:'
  let cursor = '0'
  do {
    const [next, keys] = await connection.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = next
    // keys come back with the prefix; the connection adds it again, so strip it
    if (keys.length) await connection.del(...keys.map((key) => key.slice(prefix.length)))
  } while (cursor !== '0')
}
