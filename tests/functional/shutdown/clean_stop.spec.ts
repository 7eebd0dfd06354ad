import { test } from '@japa/runner'
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { onMysql, hasRedis } from '#tests/helpers/database'
import { ROOT, signIn, startQuire } from '../../../bench/lib/quire_process.js'
import { childEnv } from '#tests/helpers/child_env'

/** Lines a clean start or stop must never log (pino's level names, as pino-pretty prints them). */
const ALARMS = /\b(FATAL|ERROR)\b|"level":\s*(50|60)\b/

/**
 * A database and Redis prefix of the test's own: `quire:setup` seeds the demo data (which publishes
 * to the socket hub) only into a database with no administrator, as on a first `npm start`.
 */
async function throwawayEnv() {
  const suffix = randomBytes(4).toString('hex')
  const database = `quire_clean_stop_${suffix}`
  await db.rawQuery(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`)
  const env = childEnv({
    LOG_LEVEL: 'info',
    DB_DATABASE: database,
    REDIS_PREFIX: `quire_clean_stop_${suffix}:`,
  })
  return {
    env,
    drop: async () => {
      await db.rawQuery(`DROP DATABASE IF EXISTS \`${database}\``)
      rmSync(env.DATA_DIR!, { recursive: true, force: true })
    },
  }
}

test.group('Clean start and stop on MariaDB + Redis', () => {
  test('the first quire:setup (migrations, demo data) logs no FATAL or ERROR line', async ({
    assert,
    cleanup,
  }) => {
    const { env, drop } = await throwawayEnv()
    cleanup(drop)
    const run = spawnSync(process.execPath, ['ace', 'quire:setup'], { cwd: ROOT, env })
    const output = `${run.stdout}${run.stderr}`
    assert.equal(run.status, 0, output)
    assert.include(output, 'Quire demo administrator')
    assert.notMatch(output, ALARMS)
  })
    .skip(!onMysql() || !hasRedis(), 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)')
    .timeout(180_000)

  test('a server stopped after traffic logs no FATAL or ERROR line and leaves the stamp instances set', async ({
    assert,
    cleanup,
  }) => {
    const { env, drop } = await throwawayEnv()
    cleanup(drop)
    const setup = spawnSync(process.execPath, ['ace', 'quire:setup'], { cwd: ROOT, env })
    assert.equal(setup.status, 0, `${setup.stdout}${setup.stderr}`)
    const admin = JSON.parse(readFileSync(join(env.DATA_DIR!, 'demo-admin.json'), 'utf8'))

    const server = await startQuire(env)
    let logs = ''
    server.child.stdout?.on('data', (chunk) => (logs += chunk))
    server.child.stderr?.on('data', (chunk) => (logs += chunk))
    const session = await signIn(server.url, admin.email, admin.password)
    // A write that publishes to the hub and schedules the books counters' refresh, just before stopping.
    const books = await fetch(`${server.url}/live/api.php`, {
      method: 'POST',
      body: new URLSearchParams({ req: 'getAllBooks', ...session }),
    }).then((response) => response.json() as Promise<any>)
    const book = books.allBooks.books[0]
    const sent = await fetch(`${server.url}/live/api.php`, {
      method: 'POST',
      body: new URLSearchParams({
        req: 'sendMsg',
        ...session,
        b_o: book.b_o,
        b_c: book.b_c,
        msg: 'just before the stop',
      }),
    }).then((response) => response.json() as Promise<any>)
    assert.equal(sent.status, 'ok', JSON.stringify(sent))
    await server.stop()

    assert.notMatch(logs, ALARMS)
    const { default: redis } = await import('@adonisjs/redis/services/main')
    // The suite's connection prefixes keys with its own prefix, never ARGV: name the child's key there.
    const instances = await redis
      .connection()
      .eval("return redis.call('zcard', ARGV[1])", 0, `${env.REDIS_PREFIX}stamps:instances`)
    assert.equal(instances, 0, 'the stopped instance left the stamp allocator instances set')
  })
    .skip(!onMysql() || !hasRedis(), 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)')
    .timeout(180_000)
})
