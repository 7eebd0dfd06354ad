import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import app from '@adonisjs/core/services/app'
import { OutboxService } from '#core/outbox/outbox_service'
import { foreground } from '#core/foreground'
import type { AttemptResult, OutboxDelivery, OutboxEntry } from '#core/outbox/types'
import type { QueueService } from '#core/services/queue_service'
import { waitFor } from '#tests/helpers/queue'

/**
 * The outbox's pump against the suite's database: pumps of their own (an
 * OutboxService each, with a queue that runs nothing: they are woken
 * directly), each with a channel of this test's only, so other tests'
 * deliveries in the table are never sent by them and never looked at.
 */
async function pump(
  answer: (delivery: OutboxDelivery) => AttemptResult | Promise<AttemptResult>,
  settings: Partial<OutboxService['settings']> = {}
) {
  const shared = await app.container.make(OutboxService)
  const sent: OutboxDelivery[] = []
  const queue = { driverKind: 'bullmq', dispatch: async () => ({}) } as unknown as QueueService
  const outbox = new OutboxService(db, async () => queue, await app.container.make('logger'), {
    ...shared.settings,
    backoff: { baseMs: 60_000, factor: 3, maxMs: 60_000, jitter: 0 },
    ...settings,
  })
  const channel = `pump-${randomUUID().slice(0, 8)}`
  outbox.registerChannel(channel, {
    send: async (delivery) => {
      sent.push(delivery)
      return answer(delivery)
    },
  })
  const entry = (key: string, extra: Partial<OutboxEntry> = {}): OutboxEntry => ({
    channel,
    recipient: 'someone',
    idempotencyKey: `${channel}:${key}`,
    eventType: 'test',
    payload: { key },
    ...extra,
  })
  const stage = (entries: OutboxEntry[]) =>
    db.transaction((trx) => outbox.enqueue(trx, entries, () => {}))
  const rows = () => db.from('outbox_deliveries').where('channel', channel).orderBy('id')
  return { outbox, channel, sent, entry, stage, rows }
}

const delivered = (): AttemptResult => ({ outcome: 'delivered', status: 200 })

test.group('outbox pump', (group) => {
  group.each.timeout(30_000)

  test('sends every due delivery, logs each attempt and finishes the rows', async ({ assert }) => {
    const { outbox, sent, entry, stage, rows } = await pump(delivered)
    await stage(Array.from({ length: 250 }, (_, index) => entry(`k${index}`)))
    outbox.pump.wake()
    await waitFor(async () => sent.length === 250, 20_000, 'every delivery sent')
    await outbox.pump.settled()
    const all = await rows()
    assert.lengthOf(all, 250)
    assert.isTrue(all.every((row) => row.state === 'delivered' && Number(row.attempts) === 1))
    assert.isTrue(all.every((row) => row.finished_at !== null && row.lease_token === null))
    const attempts = await db.from('outbox_attempts').whereIn(
      'delivery_id',
      all.map((row) => row.id)
    )
    assert.lengthOf(attempts, 250)
    assert.isTrue(attempts.every((attempt) => attempt.outcome === 'delivered'))
    // Each sent once.
    assert.equal(new Set(sent.map((delivery) => delivery.id)).size, 250)
  })

  test('a delivery waits while an earlier one of its order key is pending, then goes', async ({
    assert,
  }) => {
    const { outbox, sent, entry, stage, rows } = await pump(delivered)
    await stage([entry('a', { orderKey: 'row-1' }), entry('b', { orderKey: 'row-1' })])
    const [first] = await rows()
    await db
      .from('outbox_deliveries')
      .where('id', first.id)
      .update({ next_attempt_at: Date.now() + 3600_000 })
    outbox.pump.wake(Date.now() + 200)
    await new Promise((resolve) => setTimeout(resolve, 400))
    assert.lengthOf(sent, 0)

    await db.from('outbox_deliveries').where('id', first.id).update({ next_attempt_at: 0 })
    outbox.pump.wake()
    await waitFor(async () => sent.length === 2, 10_000, 'both sent')
    assert.deepEqual(
      sent.map((delivery) => delivery.payload.key),
      ['a', 'b']
    )
  })

  test('a failed attempt is logged and scheduled again with the backoff', async ({ assert }) => {
    const { outbox, sent, entry, stage, rows } = await pump(() => ({
      outcome: 'retry',
      status: 500,
      error: 'HTTP 500',
    }))
    await stage([entry('x')])
    const before = Date.now()
    outbox.pump.wake()
    await waitFor(async () => sent.length === 1, 10_000, 'the first attempt')
    await outbox.pump.settled()
    const [row] = await rows()
    assert.equal(row.state, 'pending')
    assert.equal(Number(row.attempts), 1)
    assert.equal(Number(row.last_status), 500)
    assert.isAtLeast(Number(row.next_attempt_at), before + 60_000)
    assert.isNull(row.finished_at)
  })

  test('two pumps on the same rows send each delivery once', async ({ assert }) => {
    const one = await pump(delivered)
    const other = await pump(delivered)
    // The other pump sends the same channel's rows through an adapter of its own.
    other.outbox.registerChannel(one.channel, {
      send: async (delivery) => {
        other.sent.push(delivery)
        return delivered()
      },
    })
    await one.stage(Array.from({ length: 300 }, (_, index) => one.entry(`r${index}`)))
    one.outbox.pump.wake()
    other.outbox.pump.wake()
    await waitFor(
      async () => one.sent.length + other.sent.length >= 300,
      20_000,
      'every delivery sent by one pump or the other'
    )
    await one.outbox.pump.settled()
    await other.outbox.pump.settled()
    const ids = [...one.sent, ...other.sent].map((delivery) => delivery.id)
    assert.lengthOf(ids, 300)
    assert.equal(new Set(ids).size, 300)
    const rows = await one.rows()
    assert.isTrue(rows.every((row) => row.state === 'delivered'))
  })

  test('the sweeper takes back a lapsed claim and has it sent again', async ({ assert }) => {
    const { outbox, sent, entry, stage, rows } = await pump(delivered)
    await stage([entry('lost')])
    const [row] = await rows()
    // As a worker killed mid-send leaves it.
    await db
      .from('outbox_deliveries')
      .where('id', row.id)
      .update({ state: 'sending', attempts: 1, lease_until: Date.now() - 1000 })
    outbox.kick = (_at?: number, reclaim = false) => outbox.pump.wake(0, reclaim)
    assert.isTrue(await outbox.sweep())
    await waitFor(async () => sent.length === 1, 10_000, 'the lapsed delivery sent again')
    await outbox.pump.settled()
    const [after] = await rows()
    assert.equal(after.state, 'delivered')
    assert.equal(Number(after.attempts), 2)
  })

  test('a recipient without room holds nobody else: with more recipients than a claim takes, each gets its turn', async ({
    assert,
  }) => {
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    const { outbox, sent, entry, stage, rows } = await pump(async (delivery) => {
      if (delivery.recipient === 'a-slow') await released
      return delivered()
    })
    // The slow recipient's rows come first (its name and its ids), then 600 recipients one each
    // (more than one statement may name on SQLite: 500 compound terms).
    await stage(
      Array.from({ length: 20 }, (_, index) => entry(`s${index}`, { recipient: 'a-slow' }))
    )
    await stage(
      Array.from({ length: 600 }, (_, index) =>
        entry(`r${index}`, { recipient: `r${String(index).padStart(3, '0')}` })
      )
    )
    outbox.pump.wake()
    const others = () => sent.filter((delivery) => delivery.recipient !== 'a-slow')
    await waitFor(async () => others().length === 600, 20_000, 'every other recipient served')
    // Only the slow one's room went to it meanwhile.
    assert.equal(sent.length - others().length, outbox.settings.sendsPerRecipient)
    release()
    await waitFor(async () => sent.length === 620, 20_000, 'the slow one served once it answers')
    await outbox.pump.settled()
    assert.equal(new Set(sent.map((delivery) => delivery.id)).size, 620, 'each sent once')
    const all = await rows()
    assert.isTrue(all.every((row) => row.state === 'delivered'))
  })

  test('writes first: while writes saturate the process, a delivery waits until it has been due for the delay', async ({
    assert,
  }) => {
    const delayMs = 400
    const { outbox, sent, entry, stage } = await pump(delivered, {
      // Threshold 0: any write in the last 100 ms saturates (the load itself is not under test here).
      writesFirst: { maxDelayMs: delayMs, threshold: 0 },
    })
    const sentAt = new Map<string, number>()
    const stagedAt = new Map<string, number>()
    foreground.saturated(0)
    foreground.beginWrite()
    try {
      await new Promise((resolve) => setTimeout(resolve, 60)) // the first load samples
      stagedAt.set('held', Date.now())
      await stage([entry('held')])
      outbox.pump.wake()
      await waitFor(async () => sent.length === 1, 10_000, 'the held delivery sent after the delay')
      sentAt.set('held', Date.now())
    } finally {
      foreground.endWrite()
    }
    assert.isAtLeast(sentAt.get('held')! - stagedAt.get('held')!, delayMs - 5)
    // No write any more: the next one is not held back.
    await new Promise((resolve) => setTimeout(resolve, 150))
    await stage([entry('free')])
    outbox.pump.wake()
    await waitFor(async () => sent.length === 2, 10_000, 'the next delivery sent')
    await outbox.pump.settled()
  })
})
