import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import app from '@adonisjs/core/services/app'
import { OutboxService } from '#core/outbox/outbox_service'
import type { OutboxDelivery } from '#core/outbox/types'
import { waitFor } from '#tests/helpers/queue'

/**
 * An entry's `notBefore`: written now, not sent before that time, by the
 * suite's real queue (in-process, or BullMQ with Redis). And cancelling the
 * waiting deliveries of a key prefix inside a transaction.
 */
test.group('outbox: notBefore and cancelByKeyPrefix', (group) => {
  const sent: { delivery: OutboxDelivery; at: number }[] = []
  const channel = `not-before-${randomUUID().slice(0, 8)}`
  group.setup(async () => {
    const outbox = await app.container.make(OutboxService)
    outbox.registerChannel(channel, {
      send: async (delivery) => {
        sent.push({ delivery, at: Date.now() })
        return { outcome: 'delivered' }
      },
    })
  })

  const entry = (key: string, notBefore?: number) => ({
    channel,
    recipient: 'someone',
    idempotencyKey: key,
    eventType: 'test',
    payload: { key },
    ...(notBefore === undefined ? {} : { notBefore }),
  })

  test('a delivery is due at its notBefore, not sent earlier, then sent once', async ({
    assert,
  }) => {
    const outbox = await app.container.make(OutboxService)
    const key = `later-${randomUUID()}`
    const notBefore = Date.now() + 1500
    const afterCommit: (() => unknown)[] = []
    await db.transaction((trx) =>
      outbox.enqueue(trx, [entry(key, notBefore)], (callback) => afterCommit.push(callback))
    )
    for (const callback of afterCommit) await callback()
    const row = await db.from('outbox_deliveries').where('idempotency_key', key).first()
    assert.equal(Number(row.next_attempt_at), notBefore)
    // A job run now (a timer cut short, a sweep) finds it not due: nothing is sent.
    await outbox.run({ id: Number(row.id) })
    const after = await db.from('outbox_deliveries').where('id', row.id).first()
    assert.equal(after.state, 'pending')
    assert.equal(Number(after.attempts), 0)

    await waitFor(
      async () => sent.some((item) => item.delivery.idempotencyKey === key),
      30_000,
      'the delayed delivery to be sent'
    )
    const sends = sent.filter((item) => item.delivery.idempotencyKey === key)
    assert.lengthOf(sends, 1)
    assert.isAtLeast(sends[0].at, notBefore)
  }).timeout(40_000)

  test('cancelByKeyPrefix cancels the waiting deliveries of the prefix only, in the transaction', async ({
    assert,
  }) => {
    const outbox = await app.container.make(OutboxService)
    const prefix = `cancel_%-${randomUUID()}:`
    const later = Date.now() + 3600_000
    await db.transaction((trx) =>
      outbox.enqueue(
        trx,
        [
          entry(`${prefix}a`, later),
          entry(`${prefix}b`, later),
          entry(`cancel_x-${prefix}`, later),
        ],
        () => {}
      )
    )
    // A rolled-back cancellation cancels nothing.
    await db
      .transaction(async (trx) => {
        await outbox.cancelByKeyPrefix(trx, channel, prefix)
        throw new Error('rolled back')
      })
      .catch(() => {})
    const states = async () => {
      const rows = await db
        .from('outbox_deliveries')
        .where('channel', channel)
        .whereIn('idempotency_key', [`${prefix}a`, `${prefix}b`, `cancel_x-${prefix}`])
      return Object.fromEntries(rows.map((row) => [row.idempotency_key, row.state]))
    }
    assert.deepEqual(Object.values(await states()), ['pending', 'pending', 'pending'])
    await db.transaction((trx) => outbox.cancelByKeyPrefix(trx, channel, prefix))
    assert.deepEqual(await states(), {
      [`${prefix}a`]: 'cancelled',
      [`${prefix}b`]: 'cancelled',
      // `_` and `%` in the prefix are not wildcards.
      [`cancel_x-${prefix}`]: 'pending',
    })
    await db.from('outbox_deliveries').where('channel', channel).delete()
  })
})
