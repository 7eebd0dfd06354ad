import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import {
  caller,
  errorCode,
  eventually,
  makeBook,
  ok,
  type Call,
} from '#plugins/tables/tests/helpers/tables'
import type { Receiver } from '../helpers/receiver.js'
import { withReceiver, table, type Book } from '../helpers/setup.js'

/**
 * updateTable's triggerUpdateUrl makes (or updates, or disables) the table's
 * row webhook through the hook the tables plugin exposes; getBookTables
 * answers the URL on the category.
 */
test.group('webhooks: updateTable triggerUpdateUrl', (group) => {
  let book: Book
  let call: Call
  let receiver: Receiver
  group.setup(async () => {
    const bench = await withReceiver()
    ;({ book, call, receiver } = bench)
    return bench.teardown
  })

  /** getBookTables' triggerUpdateUrl of a table. */
  async function urlOf(catId: number) {
    const answer = ok(await call('getBookTables', { b_o: book.b_o, b_c: book.b_c }))
    const category = answer.bookTables.categories.find((c: any) => c.id === catId)
    return category.triggerUpdateUrl as string | null
  }

  test('creates the row webhook, updates its URL, disables it with an empty URL', async ({
    assert,
  }) => {
    const t = await table(call, book)
    assert.isNull(await urlOf(t.catId))
    ok(await call('updateTable', { catId: t.catId, triggerUpdateUrl: receiver.url }))
    assert.equal(await urlOf(t.catId), receiver.url)
    const [hook] = ok(await call('listWebhooks', { b_o: book.b_o, catId: t.catId })).webhooks
    assert.containsSubset(hook, {
      url: receiver.url,
      triggerUpdateUrl: true,
      active: true,
      events: ['row.created', 'row.updated', 'row.deleted'],
    })
    // Its secret is readable by rotating it; the old one was never answered.
    const { secret } = ok(await call('rotateWebhookSecret', { webhookId: hook.id }))
    receiver.state.secrets.push(secret)
    ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: t.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [t.item]: 'pen' }),
      })
    )
    await eventually(async () => receiver.received.length >= 1)
    assert.equal(receiver.received[0].body.type, 'row.created')

    // Another URL: the same webhook, its URL changed.
    const other = `${receiver.url}/v2`
    ok(await call('updateTable', { catId: t.catId, triggerUpdateUrl: other }))
    const after = ok(await call('listWebhooks', { b_o: book.b_o, catId: t.catId })).webhooks
    assert.lengthOf(after, 1)
    assert.equal(after[0].id, hook.id)
    assert.equal(after[0].url, other)
    assert.equal(await urlOf(t.catId), other)

    // Empty: disabled, and getBookTables answers null.
    ok(await call('updateTable', { catId: t.catId, triggerUpdateUrl: '' }))
    const disabled = ok(await call('listWebhooks', { b_o: book.b_o, catId: t.catId })).webhooks
    assert.isFalse(disabled[0].active)
    assert.isNull(await urlOf(t.catId))
  })

  test('a refused URL answers INVALID_PARAMETER and stores nothing', async ({ assert }) => {
    const t = await table(call, book)
    for (const url of ['ftp://example.com/x', 'http://169.254.169.254/latest'])
      assert.equal(
        await errorCode(call('updateTable', { catId: t.catId, triggerUpdateUrl: url })),
        'INVALID_PARAMETER'
      )
    assert.isNull(await urlOf(t.catId))
    const rows = await db.from('webhooks').where('category_id', t.catId)
    assert.lengthOf(rows, 0)
  })

  test("a member who is not the table's administrator cannot set it", async ({ assert }) => {
    const shared = await makeBook([{ right: 2 }])
    const t = await table(caller(shared.session), shared)
    const member = caller(shared.members[0].session)
    const code = await errorCode(
      member('updateTable', { b_o: shared.b_o, catId: t.catId, triggerUpdateUrl: receiver.url })
    )
    assert.oneOf(code, ['FORBIDDEN', 'NOT_FOUND'])
    assert.lengthOf(await db.from('webhooks').where('category_id', t.catId), 0)
  })
})
