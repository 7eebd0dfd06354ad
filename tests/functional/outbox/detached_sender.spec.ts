import { readFileSync } from 'node:fs'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { hasRedis } from '#tests/helpers/database'
import { caller, eventually, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { attached } from '#tests/functional/socket/socket_client'
import { startReceiver } from '#plugins/webhooks/tests/helpers/receiver'
import { table, withoutSweeper } from '#plugins/webhooks/tests/helpers/setup'
import settings from '#core/settings/main'
import { startQuire, type QuireProcess } from '../../../bench/lib/quire_process.js'
import { callerOn } from '#tests/helpers/server_caller'

/** The pids of a process's children whose command line holds `outbox:send` (Linux /proc). */
function sendersOf(pid: number): number[] {
  let children: string[] = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean)
  } catch {
    return []
  }
  return children.map(Number).filter((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('outbox:send')
    } catch {
      return false
    }
  })
}

/**
 * How long a wait that includes a sender's start may take. The sender is a cold `node ace
 * outbox:send` under the TypeScript loader at nice 10: measured 9-25 s from fork to ready with
 * 3-5 copies of this spec at once (load 15-32), and it claims nothing before it is ready, so a
 * delivery waits (pending, never lost) that long. A 30 s budget failed on a busier machine.
 */
const BOOT_MS = 180_000

/** On a failed wait: the outbox's rows and attempts, to tell a lost delivery from a slow one. */
async function outboxState() {
  const rows = await db
    .from('outbox_deliveries')
    .orderBy('id')
    .select('id', 'state', 'attempts', 'next_attempt_at', 'lease_until', 'last_error')
  const attempts = await db
    .from('outbox_attempts')
    .orderBy('id')
    .select('delivery_id', 'attempt', 'outcome', 'status', 'duration_ms', 'error')
  return JSON.stringify({ now: Date.now(), rows, attempts })
}

const needs = () =>
  hasRedis()
    ? 'the detached sender serves the in-process queue only (REDIS_HOST is set: skipped)'
    : null

/**
 * OUTBOX_SENDER=process (the embedded default outside tests): a real server
 * process (bin/server.ts, the suite's database) forks `node ace outbox:send`,
 * which sends its deliveries; killed, it is started again and nothing is
 * lost; the hub messages it makes (a web alarm) reach the web process's
 * sockets.
 */
test.group('outbox: the web process sends through a process of its own', (group) => {
  // This process shares the database: its sweeper stays out of the way (only the child's sender sends).
  group.setup(async () => {
    const restore = await withoutSweeper()
    // withoutSweeper's 500 ms delivery timeout (a runtime setting: the server reads it from the
    // shared database) is the default's again: with one attempt each, a niced sender's first
    // request slower than that on a loaded machine would fail for good (received, yet 'failed').
    await settings.update('webhooks.timeoutMs', 10_000)
    return restore
  })

  test('deliveries go out through the sender; a killed sender is restarted and loses nothing; its alarms reach the sockets', async ({
    assert,
    cleanup,
  }) => {
    const receiver = await startReceiver()
    cleanup(() => receiver.close())
    const book = await makeBook()
    const t = await table(caller(book.session), book)

    const server: QuireProcess = await startQuire({
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      OUTBOX_SENDER: 'process',
      WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8',
      // One attempt each: a 500 is a failure for good at once.
      OUTBOX_MAX_ATTEMPTS: '1',
      OUTBOX_SWEEP_MS: '500',
      OUTBOX_SWEEP_GRACE_MS: '500',
    })
    cleanup(() => server.stop())
    server.child.stdout?.resume()
    const call = callerOn(server.url, book.session)
    const created = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        catId: t.catId,
        url: receiver.url,
        events: 'row.created',
      })
    )
    receiver.state.secrets.push(created.secret)
    const write = async (key: string) =>
      ok(
        await call('createOrUpdateTableRow', {
          rowId: `tmp${key}`,
          catId: t.catId,
          bypassUrlTrigger: 'false',
          fieldValues: JSON.stringify({ [t.item]: key }),
        })
      )
    const items = () => receiver.received.map((entry) => entry.body.data.fields[0].new)
    const waitFor = async (probe: () => Promise<boolean>, ms: number, what: string) => {
      try {
        await eventually(probe, ms, what)
      } catch (error) {
        throw new Error(`${(error as Error).message}; outbox: ${await outboxState()}`)
      }
    }

    // The web process has forked its sender.
    await waitFor(async () => sendersOf(server.child.pid!).length === 1, 60_000, 'sender forked')
    const [first] = sendersOf(server.child.pid!)
    await write('one')
    // Received and its result written: a sender killed before answering would have it sent again
    // (at least once), which this test would count as a double.
    const settled = async () => {
      const rows = await db.from('outbox_deliveries').where('recipient', `wh:${created.webhook.id}`)
      return rows.length > 0 && rows.every((row) => row.state === 'delivered')
    }
    // The sender claims nothing before it is ready: this wait includes its start.
    await waitFor(
      async () => items().includes('one') && (await settled()),
      BOOT_MS,
      'one delivered and settled'
    )

    // Killed outright: a write meanwhile waits in the outbox and goes once a new sender runs.
    process.kill(first, 'SIGKILL')
    await write('two')
    await waitFor(
      async () => {
        const senders = sendersOf(server.child.pid!)
        return senders.length === 1 && senders[0] !== first
      },
      60_000,
      'a new sender'
    )
    // Forked is not ready: this wait includes the new sender's start.
    await waitFor(async () => items().includes('two'), BOOT_MS, 'two delivered')
    assert.sameMembers(items(), ['one', 'two'], 'each change delivered once')
    assert.lengthOf(receiver.rejected, 0)

    // A success after failures resets the subscription's failure count: the send (in the
    // sender) notes it in its result, the hook (in the web process) writes it.
    const failures = async () => {
      const subscription = await db.from('webhooks').where('id', created.webhook.id).first()
      return Number(subscription.consecutive_failures)
    }
    receiver.state.answer = () => 500
    await write('three')
    await waitFor(async () => (await failures()) === 1, 30_000, 'one failure counted')
    receiver.state.answer = () => 200
    await write('four')
    await waitFor(async () => (await failures()) === 0, 30_000, 'failures reset')

    // A reminder's web alarm: the sender fires the reminder (its fan-out stages the alarm and
    // asks the web process for a kick), then sends the alarm through its hub, relayed to the
    // creator's socket on the web process.
    const socket = await attached(book.session, server.url)
    cleanup(async () => {
      await socket.close()
    })
    const now = Math.floor(Date.now() / 1000)
    const sent = ok(
      await call('sendMsg', {
        b_o: book.b_o,
        b_c: book.b_c,
        msg: 'stand-up',
        event: JSON.stringify({
          eventStart: now + 62,
          eventEnd: now + 3662,
          eventTimezone: 'Europe/Paris',
          reminderData: { time: 60, alarm: true, remindermember: 0 },
        }),
      })
    )
    const alarm = await socket.next(
      (frame) => frame.type === 11 && frame.msg === 'alarm',
      30_000,
      "the web alarm, relayed from the sender's hub"
    )
    assert.equal(alarm.value.smid, sent.createMessageId)
  })
    .timeout(600_000)
    .skip(Boolean(needs()), needs() ?? undefined)
})
