import { spawn } from 'node:child_process'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { Redis } from 'ioredis'
import { OutboxService } from '#core/outbox/outbox_service'
import { hasRedis, onMysql } from '#tests/helpers/database'
import { waitFor } from '#tests/helpers/queue'
import { book, client } from '#plugins/books/tests/helpers/books'
import {
  relayEnv,
  startSmtpRelay,
  type SmtpRelay,
} from '#plugins/gateways/tests/helpers/smtp_relay'
import { ROOT, startQuire, type QuireProcess } from '../../../../bench/lib/quire_process.js'

/** api.php on a child server as a session. */
function callerOn(base: string, session: { o_u: string; sesskey: string }) {
  return async (req: string, params: Record<string, string>) => {
    const response = await fetch(`${base}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ req, o_u: session.o_u, sesskey: session.sesskey, ...params }),
    })
    return (await response.json()) as Record<string, any>
  }
}

/** An event starting in `dueIn` + 60 seconds with an e-mail reminder 60 seconds before. */
function reminded(dueIn: number) {
  const start = Math.floor(Date.now() / 1000) + dueIn + 60
  return JSON.stringify({
    eventStart: start,
    eventEnd: start + 1800,
    reminderData: { email: true, time: 60 },
  })
}

const reminderRow = (smid: number) =>
  db.from('outbox_deliveries').where('channel', 'reminder').where('recipient', `message:${smid}`)

/** This process shares the database: its sweeper stays out of the way (only the child sends). */
async function withoutSweeper() {
  const outbox = await app.container.make(OutboxService)
  outbox.stopSweeper()
  return () => outbox.startSweeper()
}

/** Deletes a child's Redis keys (its queue's delayed jobs): what a Redis flush does to them. */
async function flushRedisPrefix(prefix: string) {
  const redis = new Redis({
    host: process.env.REDIS_HOST,
    port: Number(process.env.REDIS_PORT ?? 6379),
    password: process.env.REDIS_PASSWORD || undefined,
    db: Number(process.env.REDIS_DB ?? 0),
  })
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      cursor = next
      if (keys.length) await redis.del(...keys)
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

const reminderMails = (relay: SmtpRelay, address: string) =>
  relay.to(address).filter((item) => item.mail.subject?.startsWith('Reminder: '))

test.group('gateways: reminders survive a restart', (group) => {
  group.setup(withoutSweeper)

  test('a reminder scheduled, the server killed (and its Redis jobs flushed), still delivered once', async ({
    assert,
    cleanup,
  }) => {
    const { relay, account } = await startSmtpRelay()
    cleanup(() => relay.close())
    const owner = await client()
    const target = await book(owner)
    const childPrefix = `${process.env.REDIS_PREFIX ?? 'quire:'}rmchild:`
    const env = {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      // Its own queue and hub channel: this process's queue worker must not take its jobs.
      REDIS_PREFIX: childPrefix,
      OUTBOX_SWEEP_MS: '300',
      OUTBOX_SWEEP_GRACE_MS: '300',
      ...relayEnv(relay, account),
    }
    let server: QuireProcess = await startQuire(env)
    cleanup(() => server.stop())
    server.child.stdout?.resume()

    const sent = await callerOn(server.url, owner.session)('sendMsg', {
      ...target,
      msg: 'survives',
      event: reminded(4),
    })
    assert.equal(sent.status, 'ok', JSON.stringify(sent))
    const exit = new Promise((resolve) => server.child.once('exit', resolve))
    server.child.kill('SIGKILL')
    await exit
    const [scheduled] = await reminderRow(sent.createMessageId)
    assert.equal(scheduled.state, 'pending')
    if (hasRedis()) await flushRedisPrefix(childPrefix)

    server = await startQuire(env)
    server.child.stdout?.resume()
    await waitFor(
      () => reminderMails(relay, owner.user.email!).length > 0,
      90_000,
      'the reminder after the restart'
    )
    await waitFor(
      async () => {
        const [row] = await reminderRow(sent.createMessageId)
        return row.state === 'delivered'
      },
      30_000,
      'the reminder row to be delivered'
    )
    assert.lengthOf(reminderMails(relay, owner.user.email!), 1)
    assert.match(reminderMails(relay, owner.user.email!)[0].mail.subject!, /^Reminder: survives, /)
  }).timeout(240_000)
})

const needs = () =>
  !onMysql() || !hasRedis() ? 'needs DB_CONNECTION=mysql and REDIS_HOST (skipped)' : null

test.group(
  'gateways: reminders sent by a separate queue:work process (MariaDB + Redis)',
  (group) => {
    group.setup(withoutSweeper)

    test('a web instance without an inline worker schedules; node ace queue:work sends when due', async ({
      assert,
      cleanup,
    }) => {
      const { relay, account } = await startSmtpRelay()
      cleanup(() => relay.close())
      const owner = await client()
      const target = await book(owner)
      const env = {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? 'quire:'}rmqw:`,
        QUEUE_INLINE_WORKER: 'false',
        // The web instance's sweeper must not be the one sending: far in the future.
        OUTBOX_SWEEP_MS: '600000',
        ...relayEnv(relay, account),
      }
      const server = await startQuire(env)
      cleanup(() => server.stop())
      server.child.stdout?.resume()
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

      const sent = await callerOn(server.url, owner.session)('sendMsg', {
        ...target,
        msg: 'worked',
        event: reminded(3),
      })
      assert.equal(sent.status, 'ok', JSON.stringify(sent))
      await waitFor(
        () => reminderMails(relay, owner.user.email!).length > 0,
        90_000,
        'the reminder sent by queue:work'
      )
      assert.match(reminderMails(relay, owner.user.email!)[0].mail.subject!, /^Reminder: worked, /)
    })
      .timeout(240_000)
      .skip(Boolean(needs()), needs() ?? undefined)
  }
)
