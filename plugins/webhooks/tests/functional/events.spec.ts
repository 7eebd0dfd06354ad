import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { caller, eventually, makeBook, ok, type Call } from '#plugins/tables/tests/helpers/tables'
import type { Receiver } from '../helpers/receiver.js'
import { withReceiver, type Book } from '../helpers/setup.js'
import { SubscriptionIndex } from '../../services/subscription_index.js'

/**
 * message.created / message.updated / message.deleted (staged by books'
 * MessageWriter in its transactions) and comment.created (tables' cell
 * comments), delivered signed to a loopback receiver.
 */
test.group('webhooks: message and comment events', (group) => {
  let book: Book
  let call: Call
  let receiver: Receiver
  group.setup(async () => {
    const bench = await withReceiver()
    ;({ book, call, receiver } = bench)
    return bench.teardown
  })
  group.each.setup(() => receiver.reset())

  test('sendMsg, its edit and deleteMsg deliver message.created, .updated, .deleted in order', async ({
    assert,
  }) => {
    const created = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        b_c: book.b_c,
        url: receiver.url,
        events: 'message.created,message.updated,message.deleted',
      })
    )
    receiver.state.secrets.push(created.secret)
    const sent = ok(await call('sendMsg', { b_o: book.b_o, b_c: book.b_c, msg: 'hello' }))
    const smid = sent.createMessageId
    ok(await call('sendMsg', { b_o: book.b_o, b_c: book.b_c, msg_id: smid, msg: 'hello again' }))
    ok(await call('deleteMsg', { b_o: book.b_o, b_c: book.b_c, msg_id: smid }))
    await eventually(async () => receiver.received.length >= 3)
    assert.lengthOf(receiver.rejected, 0)
    assert.deepEqual(
      receiver.received.map((entry) => entry.body.type),
      ['message.created', 'message.updated', 'message.deleted']
    )
    const [first, second, third] = receiver.received.map((entry) => entry.body.data)
    assert.containsSubset(first, {
      webhookId: created.webhook.id,
      book: { b_o: book.b_o, b_c: book.b_c },
      smid,
      uuid: sent.uuid,
      message: { smid, msg: 'hello', u_c: book.b_o, del: false },
      actor: { u_c: book.b_o, onBehalfOf: null },
      sstamp: sent.sstamp,
    })
    assert.equal(receiver.received[0].id, first.idempotencyKey)
    assert.containsSubset(second, { smid, message: { msg: 'hello again' } })
    assert.containsSubset(third, { smid, message: { del: true, msg: '' } })
    assert.isAbove(second.sstamp, first.sstamp)
    assert.isAbove(third.sstamp, second.sstamp)
  })

  test('a book without a subscription stages no webhook delivery (the index answers no)', async ({
    assert,
  }) => {
    const other = await makeBook()
    // Other plugins (gateways) may contribute to the topic: this plugin's part says no.
    const index = await app.container.make(SubscriptionIndex)
    assert.isFalse(index.hasBook(other.id))
    const webhookRows = () =>
      db.from('outbox_deliveries').where('channel', 'webhook').count('* as n').first()
    const before = await webhookRows()
    ok(await caller(other.session)('sendMsg', { b_o: other.b_o, b_c: other.b_c, msg: 'quiet' }))
    const after = await webhookRows()
    assert.equal(Number(after.n), Number(before.n))
  })

  test('only the subscribed message types are delivered', async ({ assert }) => {
    const own = await makeBook()
    const ownCall = caller(own.session)
    const created = ok(
      await ownCall('createWebhook', {
        b_o: own.b_o,
        b_c: own.b_c,
        url: receiver.url,
        events: 'message.deleted',
      })
    )
    receiver.state.secrets.push(created.secret)
    const sent = ok(await ownCall('sendMsg', { b_o: own.b_o, b_c: own.b_c, msg: 'x' }))
    ok(await ownCall('deleteMsg', { b_o: own.b_o, b_c: own.b_c, msg_id: sent.createMessageId }))
    await eventually(async () => receiver.received.length >= 1)
    const rows = await db.from('outbox_deliveries').where('recipient', `wh:${created.webhook.id}`)
    assert.deepEqual(
      rows.map((row) => row.event_type),
      ['message.deleted']
    )
  })

  test('copyOrMoveMessage: the copy is message.created in the target book, a move is also message.deleted in the source', async ({
    assert,
  }) => {
    // Two new books of the owner's: no other test's subscription listens to them.
    const source = `${book.b_c}s`
    const target = `${book.b_c}t`
    ok(await call('createBook', { b_c: source }))
    ok(await call('createBook', { b_c: target }))
    const subscribe = async (b_c: string) => {
      const created = ok(
        await call('createWebhook', {
          b_o: book.b_o,
          b_c,
          url: receiver.url,
          events: 'message.created,message.deleted',
        })
      )
      receiver.state.secrets.push(created.secret)
      return created.webhook.id as number
    }
    const sourceHook = await subscribe(source)
    const targetHook = await subscribe(target)
    const sent = ok(await call('sendMsg', { b_o: book.b_o, b_c: source, msg: 'travels' }))
    const smid = sent.createMessageId
    const base = { b_o: book.b_o, b_c: source, msg_id: smid, to_b_c: target }
    const copied = ok(await call('copyOrMoveMessage', base))
    const moved = ok(await call('copyOrMoveMessage', { ...base, move: 1 }))
    await eventually(async () => receiver.received.length >= 4)
    assert.lengthOf(receiver.rejected, 0)
    const seen = (webhookId: number) =>
      receiver.received
        .filter((entry) => entry.body.data.webhookId === webhookId)
        .map((entry) => [entry.body.type, entry.body.data.smid, entry.body.data.message.msg])
    assert.deepEqual(seen(sourceHook), [
      ['message.created', smid, 'travels'],
      ['message.deleted', smid, ''],
    ])
    assert.sameDeepMembers(seen(targetHook), [
      ['message.created', copied.createMessageId, 'travels'],
      ['message.created', moved.createMessageId, 'travels'],
    ])
    const [copy] = receiver.received.filter(
      (entry) => entry.body.data.smid === copied.createMessageId
    )
    assert.containsSubset(copy.body.data, {
      book: { b_o: book.b_o, b_c: target },
      uuid: copied.uuid,
      actor: { u_c: book.b_o, onBehalfOf: null },
    })
  })

  test('a new cell comment delivers comment.created; an edit of it does not', async ({
    assert,
  }) => {
    const { catId } = ok(
      await call('createTable', {
        b_o: book.b_o,
        b_c: book.b_c,
        name: 'Orders',
        fields: JSON.stringify([
          { name: 'Item', type: 'shorttext' },
          { name: 'Talk', type: 'comments' },
        ]),
      })
    )
    const fields = ok(
      await call('getBookTables', { b_o: book.b_o, b_c: book.b_c, includeFields: 'true' })
    ).bookTables.categories.find((category: any) => category.id === catId).fields
    const id = (name: string) => fields.find((field: any) => field.name === name).id as number
    const t = { catId, item: id('Item'), talk: id('Talk') }
    const created = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        catId: t.catId,
        url: receiver.url,
        events: 'comment.created',
      })
    )
    receiver.state.secrets.push(created.secret)
    const row = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: t.catId,
        fieldValues: JSON.stringify({ [t.item]: 'pen' }),
      })
    )
    const rowId = row.newRows?.[0]?.id ?? row.id
    const comment = ok(
      await call('editTableValueComments', { fieldId: t.talk, rowId: String(rowId), m: 'check' })
    )
    ok(
      await call('editTableValueComments', {
        fieldId: t.talk,
        rowId: String(rowId),
        m: 'checked',
        id: comment.id,
      })
    )
    await eventually(async () => receiver.received.length >= 1)
    assert.lengthOf(receiver.rejected, 0)
    const rows = await db.from('outbox_deliveries').where('recipient', `wh:${created.webhook.id}`)
    assert.lengthOf(rows, 1)
    assert.containsSubset(receiver.received[0].body, {
      type: 'comment.created',
      data: {
        webhookId: created.webhook.id,
        book: { b_o: book.b_o, b_c: book.b_c },
        table: { catId: t.catId, name: 'Orders' },
        rowId,
        field: { fieldId: t.talk, name: 'Talk' },
        comment: { id: comment.id, m: 'check' },
        actor: { u_c: book.b_o, onBehalfOf: null },
      },
    })
  })
})
