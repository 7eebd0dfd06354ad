import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { Webhook } from 'standardwebhooks'
import {
  caller,
  errorCode,
  eventually,
  makeBook,
  ok,
  ownerActor,
  type Call,
} from '#plugins/tables/tests/helpers/tables'
import webhooksConfig from '../../config.js'
import { WebhookService } from '../../services/webhook_service.js'
import type { Receiver } from '../helpers/receiver.js'
import { loosen, table, withReceiver, type Book } from '../helpers/setup.js'

const deliveriesOf = (webhookId: number) =>
  db.from('outbox_deliveries').where('recipient', `wh:${webhookId}`).orderBy('id')

/** The state of a webhook's first delivery. */
async function firstState(webhookId: number) {
  const [row] = await deliveriesOf(webhookId)
  return row?.state
}

test.group('webhooks: subscriptions', (group) => {
  let book: Book
  let call: Call
  let t: Awaited<ReturnType<typeof table>>
  group.setup(async () => {
    book = await makeBook([{ right: 2 }])
    call = caller(book.session)
    t = await table(call, book)
    return loosen()
  })

  test('createWebhook answers the webhook and its secret once; listWebhooks never shows it', async ({
    assert,
  }) => {
    const created = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        catId: t.catId,
        url: 'http://localhost:9/in',
        events: 'row.created,row.updated',
        fieldIds: String(t.qty),
        description: 'stock',
      })
    )
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
    assert.containsSubset(created.webhook, {
      url: 'http://localhost:9/in',
      events: ['row.created', 'row.updated'],
      fieldIds: [t.qty],
      active: true,
      catId: t.catId,
    })
    const listed = ok(await call('listWebhooks', { b_o: book.b_o, catId: t.catId }))
    assert.lengthOf(listed.webhooks, 1)
    assert.notInclude(JSON.stringify(listed), created.secret)
    const stored = await db.from('webhooks').where('id', created.webhook.id).first()
    assert.notInclude(stored.secret, created.secret.slice(6)) // encrypted at rest
  })

  test('bad input answers a documented nok and stores nothing', async ({ assert }) => {
    const before = await db.from('webhooks').count('* as n').first()
    const base = { b_o: book.b_o, catId: t.catId, events: 'row.created' }
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, url: 'ftp://example.com/x' }, 'INVALID_PARAMETER'],
      [{ ...base, url: 'not a url' }, 'INVALID_PARAMETER'],
      [{ ...base, url: 'http://169.254.169.254/latest' }, 'INVALID_PARAMETER'],
      [{ ...base, url: 'http://10.0.0.1/' }, 'INVALID_PARAMETER'],
      [{ ...base, url: 'http://localhost:9/', events: 'row.exploded' }, 'INVALID_PARAMETER'],
      [{ ...base, url: 'http://localhost:9/', events: 'message.created' }, 'INVALID_PARAMETER'],
      [{ ...base, url: 'http://localhost:9/', fieldIds: '999999' }, 'INVALID_PARAMETER'],
      [{ ...base, url: 'http://localhost:9/', events: '' }, 'MISSING_PARAMETER'],
    ]
    for (const [params, code] of cases)
      assert.equal(await errorCode(call('createWebhook', params)), code, JSON.stringify(params))
    // A field of another table.
    const other = await table(call, book)
    assert.equal(
      await errorCode(
        call('createWebhook', { ...base, url: 'http://localhost:9/', fieldIds: String(other.qty) })
      ),
      'INVALID_PARAMETER'
    )
    // Another user's table: not visible; a member who is not an administrator: refused.
    const stranger = await makeBook()
    assert.equal(
      await errorCode(
        caller(stranger.session)('createWebhook', { ...base, url: 'http://localhost:9/' })
      ),
      'NOT_FOUND'
    )
    assert.equal(
      await errorCode(
        caller(book.members[0].session)('createWebhook', { ...base, url: 'http://localhost:9/' })
      ),
      'FORBIDDEN'
    )
    const after = await db.from('webhooks').count('* as n').first()
    assert.equal(Number(after.n), Number(before.n))
  })
  test('updateWebhook checks fieldIds against its own table; a disabled webhook is not redelivered', async ({
    assert,
  }) => {
    const { webhook } = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        catId: t.catId,
        url: 'http://localhost:9/update',
        events: 'row.created',
      })
    )
    const other = await table(call, book)
    assert.equal(
      await errorCode(
        call('updateWebhook', { webhookId: webhook.id, fieldIds: String(other.qty) })
      ),
      'INVALID_PARAMETER'
    )
    const updated = ok(
      await call('updateWebhook', { webhookId: webhook.id, fieldIds: String(t.qty), active: 0 })
    )
    assert.containsSubset(updated.webhook, { fieldIds: [t.qty], active: false })
    assert.equal(
      await errorCode(call('redeliverWebhook', { webhookId: webhook.id, since: 0 })),
      'CONFLICT'
    )
    // A member who is not the table's administrator may not change it.
    assert.equal(
      await errorCode(
        caller(book.members[0].session)('updateWebhook', { webhookId: webhook.id, active: 1 })
      ),
      'FORBIDDEN'
    )
  })

  test('the cap per table holds under concurrent creations', async ({ assert }) => {
    const fresh = await table(call, book)
    const webhooks = await app.container.make(WebhookService)
    const saved = webhooksConfig.maxPerTarget
    webhooksConfig.maxPerTarget = 2
    try {
      // createWebhook's own service method, six at once: each reaches the count before any inserts.
      const create = (index: number) =>
        webhooks.create(
          ownerActor(book),
          { b_o: book.b_o, catId: fresh.catId },
          { url: `http://localhost:9/cap${index}`, events: 'row.created' }
        )
      await create(0)
      const outcomes = await Promise.allSettled([1, 2, 3, 4, 5, 6].map(create))
      const codes = outcomes
        .map((outcome) => (outcome.status === 'fulfilled' ? 'ok' : outcome.reason.code))
        .sort()
      assert.deepEqual(codes, ['CONFLICT', 'CONFLICT', 'CONFLICT', 'CONFLICT', 'CONFLICT', 'ok'])
      const stored = await db.from('webhooks').where('category_id', fresh.catId)
      assert.lengthOf(stored, 2)
    } finally {
      webhooksConfig.maxPerTarget = saved
    }
  })
})

test.group('webhooks: deliveries', (group) => {
  let book: Book
  let call: Call
  let t: Awaited<ReturnType<typeof table>>
  let receiver: Receiver
  group.setup(async () => {
    const bench = await withReceiver()
    ;({ book, call, receiver } = bench)
    t = await table(call, book)
    return bench.teardown
  })
  group.each.setup(() => receiver.reset())

  async function subscribe(events = 'row.created,row.updated,row.deleted', catId = t.catId) {
    const created = ok(
      await call('createWebhook', { b_o: book.b_o, catId, url: receiver.url, events })
    )
    receiver.state.secrets.push(created.secret)
    return created as { webhook: { id: number }; secret: string }
  }

  test('a row write is delivered signed (Standard Webhooks), with old and new values, actor and stamp', async ({
    assert,
  }) => {
    const own = await table(call, book)
    const { webhook } = await subscribe('row.created,row.updated', own.catId)
    const created = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: own.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [own.item]: 'pen', [own.qty]: '3' }),
      })
    )
    const rowId = created.newRows?.[0]?.id ?? created.id
    ok(
      await call('updateTableValue', {
        rowId: String(rowId),
        fieldId: own.qty,
        value: '5',
        bypassUrlTrigger: 'false',
      })
    )
    await eventually(async () => receiver.received.length >= 2)
    assert.lengthOf(receiver.rejected, 0)
    const [first, second] = receiver.received
    assert.equal(first.body.type, 'row.created')
    assert.equal(second.body.type, 'row.updated')
    assert.containsSubset(second.body.data, {
      webhookId: webhook.id,
      book: { b_o: book.b_o, b_c: book.b_c },
      table: { catId: own.catId, name: 'Orders' },
      rowId,
      fields: [{ fieldId: own.qty, name: 'Qty', old: 3, new: 5 }],
      actor: { u_c: book.b_o, onBehalfOf: null },
      source: 'api',
    })
    assert.equal(second.id, second.body.data.idempotencyKey)
    assert.isAbove(second.body.data.sstamp, first.body.data.sstamp)
    // An attacker without the secret cannot produce a verifying request.
    assert.throws(() =>
      new Webhook(`whsec_${Buffer.from('x'.repeat(24)).toString('base64')}`).verify(second.raw, {
        'webhook-id': second.id,
        'webhook-timestamp': String(second.timestamp),
        'webhook-signature': second.signatures.join(' '),
      })
    )
    // The reference library refuses an old timestamp (the receiver's replay protection).
    const oldTimestamp = second.timestamp - 600
    assert.throws(() =>
      new Webhook(receiver.state.secrets.at(-1)!).verify(second.raw, {
        'webhook-id': second.id,
        'webhook-timestamp': String(oldTimestamp),
        'webhook-signature': second.signatures.join(' '),
      })
    )
  })

  test('api.php writes without bypassUrlTrigger=false fire nothing', async ({ assert }) => {
    const own = await table(call, book)
    const { webhook } = await subscribe('row.created,row.updated', own.catId)
    const created = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: own.catId,
        fieldValues: JSON.stringify({ [own.qty]: '1' }),
      })
    )
    const rowId = created.newRows?.[0]?.id ?? created.id
    ok(await call('updateTableValue', { rowId: String(rowId), fieldId: own.qty, value: '2' }))
    ok(
      await call('updateTableValue', {
        rowId: String(rowId),
        fieldId: own.qty,
        value: '3',
        bypassUrlTrigger: 'true',
      })
    )
    ok(
      await call('updateTableValue', {
        rowId: String(rowId),
        fieldId: own.qty,
        value: '4',
        bypassUrlTrigger: 'false',
      })
    )
    await eventually(async () => receiver.received.length >= 1)
    // Only the last write was staged (the outbox holds one row for this webhook), and its old value is 3.
    assert.lengthOf(await deliveriesOf(webhook.id), 1)
    assert.lengthOf(receiver.received, 1)
    assert.deepEqual(receiver.received[0].body.data.fields[0], {
      fieldId: own.qty,
      name: 'Qty',
      old: 3,
      new: 4,
    })
  })

  test('a 500 and a timeout are retried until delivered; the log shows each attempt', async ({
    assert,
  }) => {
    const own = await table(call, book)
    const { webhook } = await subscribe('row.created', own.catId)
    receiver.state.answer = (_body, count) => (count === 1 ? 500 : count === 2 ? 'hang' : 200)
    ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: own.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [own.qty]: '1' }),
      })
    )
    await eventually(async () => {
      const [row] = await deliveriesOf(webhook.id)
      return row?.state === 'delivered'
    })
    assert.lengthOf(receiver.received, 3)
    assert.equal(new Set(receiver.received.map((entry) => entry.id)).size, 1) // one webhook-id
    const log = ok(await call('getWebhookDeliveries', { webhookId: webhook.id }))
    assert.equal(log.total, 1)
    const [delivery] = log.deliveries
    assert.equal(delivery.status, 'delivered')
    assert.equal(delivery.attempts, 3)
    assert.deepEqual(
      delivery.log.map((attempt: any) => [attempt.outcome, attempt.responseCode]),
      [
        ['retry', 500],
        ['retry', null],
        ['delivered', 200],
      ]
    )
    assert.match(delivery.log[1].error, /timeout/)
    assert.equal(delivery.log[0].response, 'answer 500')
  })

  test('rotateWebhookSecret: two signatures, each verifying with its secret', async ({
    assert,
  }) => {
    const own = await table(call, book)
    const { webhook, secret: oldSecret } = await subscribe('row.created', own.catId)
    const rotated = ok(await call('rotateWebhookSecret', { webhookId: webhook.id }))
    assert.notEqual(rotated.secret, oldSecret)
    receiver.state.secrets.push(rotated.secret)
    ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: own.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [own.qty]: '1' }),
      })
    )
    await eventually(async () => receiver.received.length >= 1)
    const [entry] = receiver.received
    assert.lengthOf(entry.signatures, 2)
    for (const secret of [oldSecret, rotated.secret])
      for (const signature of entry.signatures.length ? [entry.signatures.join(' ')] : [])
        assert.doesNotThrow(() =>
          new Webhook(secret).verify(entry.raw, {
            'webhook-id': entry.id,
            'webhook-timestamp': String(entry.timestamp),
            'webhook-signature': signature,
          })
        )
    // Each signature alone verifies with exactly one of the secrets.
    const verifiesWith = (secret: string, signature: string) => {
      try {
        new Webhook(secret).verify(entry.raw, {
          'webhook-id': entry.id,
          'webhook-timestamp': String(entry.timestamp),
          'webhook-signature': signature,
        })
        return true
      } catch {
        return false
      }
    }
    assert.isTrue(verifiesWith(rotated.secret, entry.signatures[0]))
    assert.isTrue(verifiesWith(oldSecret, entry.signatures[1]))
    assert.isFalse(verifiesWith(oldSecret, entry.signatures[0]))
  })

  test('410 Gone disables the subscription; a disabled subscription receives nothing', async ({
    assert,
  }) => {
    const own = await table(call, book)
    const { webhook } = await subscribe('row.created,row.updated', own.catId)
    receiver.state.answer = () => 410
    const created = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: own.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [own.qty]: '1' }),
      })
    )
    await eventually(async () => {
      const row = await db.from('webhooks').where('id', webhook.id).first()
      return !Number(row.active)
    })
    const listed = ok(await call('listWebhooks', { b_o: book.b_o, catId: own.catId }))
    assert.containsSubset(listed.webhooks[0], {
      active: false,
      disabledReason: 'the receiver answered 410 Gone',
    })
    const rowId = created.newRows?.[0]?.id ?? created.id
    ok(
      await call('updateTableValue', {
        rowId: String(rowId),
        fieldId: own.qty,
        value: '2',
        bypassUrlTrigger: 'false',
      })
    )
    assert.lengthOf(await deliveriesOf(webhook.id), 1) // the later write staged nothing
    assert.lengthOf(receiver.received, 1)
  })

  test('per-row order holds under concurrent writes', async ({ assert }) => {
    const own = await table(call, book)
    await subscribe('row.updated', own.catId)
    const created = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: own.catId,
        fieldValues: JSON.stringify({ [own.qty]: '0' }),
      })
    )
    const rowId = created.newRows?.[0]?.id ?? created.id
    // The receiver is slow to answer the first few, so later deliveries are ready meanwhile.
    receiver.state.answer = (_body, count) => (count === 1 && Math.random() < 0.5 ? 500 : 200)
    await Promise.all(
      Array.from({ length: 15 }, (_, index) =>
        call('updateTableValue', {
          rowId: String(rowId),
          fieldId: own.qty,
          value: String(index + 1),
          bypassUrlTrigger: 'false',
        }).then(ok)
      )
    )
    const accepted = () => receiver.received.filter((entry) => entry.status === 200)
    await eventually(async () => accepted().length >= 15, 20_000)
    // Delivered (first receipt of each id) in the order the writes applied: each one's old value
    // is the previous one's new value, from the first (0) to the row's final value. (Stamps are
    // not that order: they are taken before the row lock, docs ARCHITECTURE "Data and stamps".)
    const seen = new Set<string>()
    const delivered = accepted().filter((entry) => {
      if (seen.has(entry.id)) return false
      seen.add(entry.id)
      return true
    })
    assert.equal(delivered[0].body.data.fields[0].old, 0)
    for (let index = 1; index < delivered.length; index++)
      assert.equal(
        delivered[index].body.data.fields[0].old,
        delivered[index - 1].body.data.fields[0].new
      )
    const final = ok(
      await call('getTableValueSubset', {
        catId: own.catId,
        fieldIds: String(own.qty),
        rowIds: String(rowId),
      })
    )
    assert.equal(Number(final.tableValues[0][0]), delivered.at(-1)!.body.data.fields[0].new)
  })

  test('concurrent one-cell writes of many rows (group-committed together) each deliver their own old and new value', async ({
    assert,
  }) => {
    const own = await table(call, book)
    const { webhook } = await subscribe('row.updated', own.catId)
    const rowIds: number[] = []
    for (let index = 0; index < 20; index++) {
      const created = ok(
        await call('createOrUpdateTableRow', {
          rowId: 'tmp1',
          catId: own.catId,
          fieldValues: JSON.stringify({ [own.qty]: String(index) }),
        })
      )
      rowIds.push(created.newRows?.[0]?.id ?? created.id)
    }
    await Promise.all(
      rowIds.map((rowId, index) =>
        call('updateTableValue', {
          rowId: String(rowId),
          fieldId: own.qty,
          value: String(100 + index),
          bypassUrlTrigger: 'false',
        }).then(ok)
      )
    )
    const mine = () =>
      receiver.received.filter(
        (entry) => entry.status === 200 && entry.body.data.webhookId === webhook.id
      )
    await eventually(async () => mine().length >= 20, 20_000)
    const byRow = new Map(mine().map((entry) => [entry.body.data.rowId, entry.body.data]))
    assert.equal(byRow.size, 20)
    rowIds.forEach((rowId, index) => {
      const data = byRow.get(rowId)!
      assert.equal(data.table.catId, own.catId)
      assert.deepEqual(
        data.fields.map((field: any) => [field.fieldId, field.old, field.new]),
        [[own.qty, index, 100 + index]]
      )
    })
    const rows = await deliveriesOf(webhook.id)
    assert.lengthOf(rows, 20)
  })

  test('redeliverWebhook sends a delivery again with the same webhook-id; testWebhook sends webhook.test', async ({
    assert,
  }) => {
    const own = await table(call, book)
    const { webhook } = await subscribe('row.created', own.catId)
    ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: own.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [own.qty]: '1' }),
      })
    )
    await eventually(async () => receiver.received.length >= 1)
    const [delivery] = await deliveriesOf(webhook.id)
    await eventually(async () => (await firstState(webhook.id)) === 'delivered')
    ok(await call('redeliverWebhook', { deliveryId: delivery.id }))
    await eventually(async () => receiver.received.length >= 2)
    assert.equal(receiver.received[1].id, receiver.received[0].id)
    const tested = ok(await call('testWebhook', { webhookId: webhook.id }))
    await eventually(async () => receiver.received.some((e) => e.body.type === 'webhook.test'))
    assert.isAbove(tested.deliveryId, 0)
    // Another user cannot read the log or redeliver.
    const stranger = await makeBook()
    assert.equal(
      await errorCode(caller(stranger.session)('redeliverWebhook', { deliveryId: delivery.id })),
      'NOT_FOUND'
    )
    assert.equal(
      await errorCode(caller(stranger.session)('getWebhookDeliveries', { webhookId: webhook.id })),
      'NOT_FOUND'
    )
  })

  test('loopback is refused unless allowed: the delivery fails without connecting', async ({
    assert,
  }) => {
    const own = await table(call, book)
    const { webhook } = await subscribe('row.created', own.catId)
    const allowed = webhooksConfig.allowedRanges
    webhooksConfig.allowedRanges = []
    try {
      ok(
        await call('createOrUpdateTableRow', {
          rowId: 'tmp1',
          catId: own.catId,
          bypassUrlTrigger: 'false',
          fieldValues: JSON.stringify({ [own.qty]: '1' }),
        })
      )
      await eventually(async () => (await firstState(webhook.id)) === 'failed')
    } finally {
      webhooksConfig.allowedRanges = allowed
    }
    const [row] = await deliveriesOf(webhook.id)
    assert.match(row.last_error, /loopback/)
    assert.notInclude(
      receiver.received.map((entry) => entry.body.data.webhookId),
      webhook.id
    )
  })
})
