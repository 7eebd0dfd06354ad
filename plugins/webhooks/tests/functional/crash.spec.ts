import { spawn } from 'node:child_process'
import { test } from '@japa/runner'
import { hasRedis, onMysql } from '#tests/helpers/database'
import db from '@adonisjs/lucid/services/db'
import { caller, eventually, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { ROOT, startQuire, type QuireProcess } from '../../../../bench/lib/quire_process.js'
import { startReceiver } from '../helpers/receiver.js'
import { table, withoutSweeper } from '../helpers/setup.js'
import { callerOn } from '#tests/helpers/server_caller'

/**
 * A real server process (bin/server.ts, same database) commits row writes
 * whose webhook receiver hangs; it is killed with SIGKILL while the first
 * attempt is in flight, then started again: every change is delivered, each
 * acknowledged (2xx) exactly once, under its one webhook-id.
 */
test.group('webhooks: SIGKILL between commit and delivery', (group) => {
  // This process shares the database: its sweeper stays out of the way (only the child sends).
  group.setup(withoutSweeper)

  test('nothing is lost and each change is delivered once after a restart', async ({
    assert,
    cleanup,
  }) => {
    const receiver = await startReceiver()
    cleanup(() => receiver.close())
    const book = await makeBook()
    const call = caller(book.session)
    const t = await table(call, book)
    const created = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        catId: t.catId,
        url: receiver.url,
        events: 'row.created',
      })
    )
    receiver.state.secrets.push(created.secret)
    receiver.state.answer = () => 'hang'

    const env = {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      // Its own queue and hub channel: this process's queue worker must not take its jobs.
      REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? 'quire:'}child:`,
      WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8',
      WEBHOOKS_TIMEOUT_MS: '30000',
      OUTBOX_LEASE_MS: '2000',
      OUTBOX_SWEEP_MS: '300',
      OUTBOX_SWEEP_GRACE_MS: '300',
      OUTBOX_BACKOFF_MS: '200',
    }
    let server: QuireProcess = await startQuire(env)
    cleanup(() => server.stop())
    server.child.stdout?.resume()

    const writes = 3
    const childCall = callerOn(server.url, book.session)
    for (let index = 0; index < writes; index++)
      ok(
        await childCall('createOrUpdateTableRow', {
          rowId: 'tmp1',
          catId: t.catId,
          bypassUrlTrigger: 'false',
          fieldValues: JSON.stringify({ [t.item]: `r${index}` }),
        })
      )
    // Committed and in flight: the receiver holds the first attempts open.
    await eventually(async () => receiver.received.length >= 1, 20_000)
    const exit = new Promise((resolve) => server.child.once('exit', resolve))
    server.child.kill('SIGKILL')
    await exit
    const stored = await db.from('outbox_deliveries').where('recipient', `wh:${created.webhook.id}`)
    assert.lengthOf(stored, writes)
    assert.isTrue(stored.some((row) => row.state !== 'delivered'))

    receiver.state.answer = () => 200
    server = await startQuire(env)
    server.child.stdout?.resume()
    await eventually(async () => {
      const rows = await db.from('outbox_deliveries').where('recipient', `wh:${created.webhook.id}`)
      return rows.every((row) => row.state === 'delivered')
    }, 30_000)

    assert.lengthOf(receiver.rejected, 0)
    const acknowledged = receiver.received.filter((entry) => entry.status === 200)
    const ids = acknowledged.map((entry) => entry.id)
    assert.lengthOf(ids, writes, 'each change acknowledged once')
    assert.lengthOf(new Set(ids), writes)
    assert.sameMembers(
      acknowledged.map((entry) => entry.body.data.fields[0].new),
      ['r0', 'r1', 'r2']
    )
  }).timeout(120_000)
})

const needs = () =>
  !onMysql() || !hasRedis() ? 'needs DB_CONNECTION=mysql and REDIS_HOST (skipped)' : null

test.group('webhooks: a separate queue:work process delivers (MariaDB + Redis)', (group) => {
  group.setup(withoutSweeper)

  test('a web instance without an inline worker stages; node ace queue:work sends', async ({
    assert,
    cleanup,
  }) => {
    const receiver = await startReceiver()
    cleanup(() => receiver.close())
    const book = await makeBook()
    const call = caller(book.session)
    const t = await table(call, book)
    const created = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        catId: t.catId,
        url: receiver.url,
        events: 'row.created',
      })
    )
    receiver.state.secrets.push(created.secret)
    const env = {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? 'quire:'}qw:`,
      QUEUE_INLINE_WORKER: 'false',
      WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8',
      // The web instance's sweeper must not be the one sending: far in the future.
      OUTBOX_SWEEP_MS: '600000',
    }
    const server = await startQuire(env)
    cleanup(() => server.stop())
    server.child.stdout?.resume()
    ok(
      await callerOn(server.url, book.session)('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: t.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [t.item]: 'queued' }),
      })
    )
    // Staged and queued, not sent: no worker yet.
    const [row] = await db.from('outbox_deliveries').where('recipient', `wh:${created.webhook.id}`)
    assert.equal(row.state, 'pending')
    assert.lengthOf(receiver.received, 0)

    const worker = spawn(process.execPath, ['ace', 'queue:work'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    cleanup(
      () =>
        new Promise<void>((resolve) => {
          if (worker.exitCode !== null) return resolve()
          worker.once('exit', () => resolve())
          worker.kill('SIGTERM')
        })
    )
    await eventually(async () => receiver.received.length >= 1, 60_000)
    assert.equal(receiver.received[0].body.data.fields[0].new, 'queued')
    assert.equal(receiver.received[0].id, receiver.received[0].body.data.idempotencyKey)
    assert.lengthOf(receiver.rejected, 0)
  })
    .timeout(120_000)
    .skip(Boolean(needs()), needs() ?? undefined)
})
