import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import app from '@adonisjs/core/services/app'
import { OutboxService, type OutboxJobPayload } from '#core/outbox/outbox_service'
import type { QueueService } from '#core/services/queue_service'

/**
 * The outbox sweeper against the suite's database, with a queue that only records what it is
 * given: which deliveries a sweep dispatches again. Other tests' deliveries may be in the table,
 * so only this test's ids are looked at.
 */
async function sweeper() {
  const dispatched: number[] = []
  const queue = {
    dispatch: async (_job: string, payload: OutboxJobPayload) => {
      if ('id' in payload) dispatched.push(payload.id)
    },
  } as unknown as QueueService
  const shared = await app.container.make(OutboxService)
  const outbox = new OutboxService(
    db,
    async () => queue,
    await app.container.make('logger'),
    shared.settings
  )
  return { outbox, dispatched }
}

test.group('outbox sweep', () => {
  test('a delivery waiting behind an earlier one of its order key is not dispatched', async ({
    assert,
  }) => {
    const { outbox, dispatched } = await sweeper()
    const orderKey = `sweep-${Date.now()}-${Math.random()}`
    const entry = (key: string) => ({
      channel: 'sweep-test',
      recipient: orderKey,
      idempotencyKey: `${orderKey}:${key}`,
      orderKey,
      eventType: 'test',
      payload: { key },
    })
    await db.transaction((trx) => outbox.enqueue(trx, [entry('a'), entry('b')], () => {}))
    const rows = await db.from('outbox_deliveries').where('recipient', orderKey).orderBy('id')
    const [first, second] = rows.map((row) => Number(row.id))
    const hourAgo = Date.now() - 3600_000
    // The first waits out its backoff (its retry job is queued with a delay); the second is
    // long due, but behind it.
    await db
      .from('outbox_deliveries')
      .where('id', first)
      .update({ next_attempt_at: Date.now() + 3600_000 })
    await db.from('outbox_deliveries').where('id', second).update({ next_attempt_at: hourAgo })
    await outbox.sweep()
    assert.notInclude(dispatched, first)
    assert.notInclude(dispatched, second)

    // Once the first is finished and its kick was lost, the second is the sweeper's.
    await db.from('outbox_deliveries').where('id', first).update({ state: 'delivered' })
    await outbox.sweep()
    assert.include(dispatched, second)
    assert.notInclude(dispatched, first)
    await db.from('outbox_deliveries').where('recipient', orderKey).delete()
  })
})
