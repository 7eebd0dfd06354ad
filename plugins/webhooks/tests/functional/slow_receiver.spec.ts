import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { OutboxService } from '#core/outbox/outbox_service'
import settings from '#core/settings/main'
import { eventually, ok, type Call } from '#plugins/tables/tests/helpers/tables'
import webhooksConfig from '../../config.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'
import { table, withReceiver, type Book } from '../helpers/setup.js'

const ROWS = 24

/**
 * A receiver that never answers holds only its own share of sends
 * (OUTBOX_SENDS_PER_RECIPIENT), never the queue's workers: another
 * subscription of the same table gets every delivery meanwhile.
 */
test.group('webhooks: a hanging receiver', (group) => {
  let book: Book
  let call: Call
  let receiver: Receiver
  group.setup(async () => {
    const bench = await withReceiver()
    ;({ book, call, receiver } = bench)
    return bench.teardown
  })

  test('does not hold back another subscription, and holds at most its share of sends', async ({
    assert,
  }) => {
    const outbox = await app.container.make(OutboxService)
    const share = outbox.settings.sendsPerRecipient
    assert.isBelow(share, ROWS)
    const hanging = await startReceiver()
    hanging.state.answer = () => 'hang'
    // Every attempt to the hanging one lasts longer than the test: none of its sends ends.
    const savedTimeout = webhooksConfig.timeoutMs
    await settings.update('webhooks.timeoutMs', 600_000)
    try {
      const t = await table(call, book)
      const subscribe = async (url: string, into: Receiver) => {
        const created = ok(
          await call('createWebhook', { b_o: book.b_o, catId: t.catId, url, events: 'row.created' })
        )
        into.state.secrets.push(created.secret)
        return created.webhook.id as number
      }
      const stuck = await subscribe(hanging.url, hanging)
      await subscribe(receiver.url, receiver)
      const rows = Object.fromEntries(
        Array.from({ length: ROWS }, (_, index) => [`tmp${index}`, { [t.item]: `item ${index}` }])
      )
      ok(
        await call('createOrUpdateTableRows', {
          b_o: book.b_o,
          rows: JSON.stringify(rows),
          bypassUrlTrigger: 'false',
        })
      )
      // More hanging requests than the queue runs jobs at once, and every fast delivery.
      await eventually(async () => receiver.received.length >= ROWS)
      await eventually(async () => hanging.received.length >= share)
      assert.lengthOf(receiver.rejected, 0)
      assert.lengthOf(hanging.rejected, 0)
      assert.lengthOf(hanging.received, share)
      ok(await call('deleteWebhook', { webhookId: stuck }))
    } finally {
      await settings.update('webhooks.timeoutMs', savedTimeout)
      await hanging.close()
    }
  })
})
