import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import settings from '#core/settings/main'
import { OutboxService } from '#core/outbox/outbox_service'
import { urlTriggerDefaults } from '#plugins/tables/lib/trigger_url_hook'
import { eventually, ok, type Call } from '#plugins/tables/tests/helpers/tables'
import { files, upload } from '#plugins/media/tests/helpers/media'
import { attached, ensureSocketEndpoint } from '#tests/functional/socket/socket_client'
import type { Receiver } from '../helpers/receiver.js'
import { withReceiver, table, type Book } from '../helpers/setup.js'

test.group('webhooks: disabling tells the creator; api.php default', (group) => {
  let book: Book
  let call: Call
  let receiver: Receiver
  group.setup(async () => {
    await ensureSocketEndpoint()
    const bench = await withReceiver()
    ;({ book, call, receiver } = bench)
    return bench.teardown
  })
  group.each.setup(() => receiver.reset())

  test('repeated failures disable the subscription and send its creator a system message (type 11)', async ({
    assert,
  }) => {
    const outbox = await app.container.make(OutboxService)
    const saved = {
      attempts: outbox.settings.maxAttempts,
    }
    outbox.settings.maxAttempts = 2
    await settings.update('webhooks.disableAfterFailures', 2)
    const socket = await attached(book.session)
    try {
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
      receiver.state.answer = () => 500
      for (const key of ['tmp1', 'tmp2'])
        ok(
          await call('createOrUpdateTableRow', {
            rowId: key,
            catId: t.catId,
            bypassUrlTrigger: 'false',
            fieldValues: JSON.stringify({ [t.item]: key }),
          })
        )
      const frame = await socket.next(
        (candidate) => candidate.type === 11 && candidate.msg === 'webhookDisabled',
        15_000,
        'the webhookDisabled system message'
      )
      assert.containsSubset(frame, {
        b_o: book.b_o,
        b_c: book.b_c,
        param: 'webhook',
        value: { webhookId: created.webhook.id, catId: t.catId, url: receiver.url },
      })
      assert.match(frame.value.disabledReason, /500/)
      const [listed] = ok(await call('listWebhooks', { b_o: book.b_o, catId: t.catId })).webhooks
      assert.isFalse(listed.active)
      assert.equal(listed.disabledReason, frame.value.disabledReason)
    } finally {
      outbox.settings.maxAttempts = saved.attempts
      await settings.update('webhooks.disableAfterFailures', null)
      await socket.close()
    }
  })

  test('WEBHOOKS_API_DEFAULT_BYPASS=false: api.php writes fire unless bypassUrlTrigger=true is sent', async ({
    assert,
  }) => {
    assert.isTrue(urlTriggerDefaults.apiBypass) // the default, set from the env at boot
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
    urlTriggerDefaults.apiBypass = false
    try {
      const write = (key: string, extra = {}) =>
        call('createOrUpdateTableRow', {
          rowId: 'tmp1',
          catId: t.catId,
          fieldValues: JSON.stringify({ [t.item]: key }),
          ...extra,
        }).then(ok)
      await write('bypassed', { bypassUrlTrigger: 'true' })
      await write('fires')
      await eventually(async () => receiver.received.length >= 1)
      const tested = ok(await call('testWebhook', { webhookId: created.webhook.id }))
      await eventually(async () => receiver.received.some((r) => r.id === tested.idempotencyKey))
      const items = receiver.received
        .filter((entry) => entry.body.type === 'row.created')
        .map((entry) => entry.body.data.fields[0].new)
      assert.deepEqual(items, ['fires'])
    } finally {
      urlTriggerDefaults.apiBypass = true
    }
  })

  test('WEBHOOKS_API_DEFAULT_BYPASS=false: a file uploaded to a files cell fires too', async ({
    assert,
  }) => {
    const { catId } = ok(
      await call('createTable', {
        b_o: book.b_o,
        b_c: book.b_c,
        name: 'Scans',
        fields: JSON.stringify([{ name: 'Files', type: 'files' }]),
      })
    )
    const tables = ok(
      await call('getBookTables', { b_o: book.b_o, b_c: book.b_c, includeFields: 'true' })
    )
    const fieldId = tables.bookTables.categories.find((c: any) => c.id === catId).fields[0].id
    const created = ok(
      await call('createWebhook', {
        b_o: book.b_o,
        catId,
        url: receiver.url,
        events: 'row.created,row.updated',
      })
    )
    receiver.state.secrets.push(created.secret)
    urlTriggerDefaults.apiBypass = false
    try {
      const sent = (name: string, extra = {}) =>
        upload(
          book.session,
          { rowId: 'tmpSCAN', fieldId, b_o: book.b_o, ...extra },
          { bytes: files.pdf(), name }
        ).then(ok)
      await sent('bypassed.pdf', { bypassUrlTrigger: 'true' })
      await sent('fires.pdf')
      await eventually(async () => receiver.received.length >= 1)
      const tested = ok(await call('testWebhook', { webhookId: created.webhook.id }))
      await eventually(async () => receiver.received.some((r) => r.id === tested.idempotencyKey))
      const names = receiver.received
        .filter((entry) => entry.body.type === 'row.created')
        .map((entry) => entry.body.data.fields[0].new.map((file: any) => file.name))
      assert.deepEqual(names, [['fires.pdf']])
    } finally {
      urlTriggerDefaults.apiBypass = true
    }
  })

  test('a delivery that gets through resets the failure count; one failure does not disable', async ({
    assert,
  }) => {
    const outbox = await app.container.make(OutboxService)
    const savedAttempts = outbox.settings.maxAttempts
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
    const webhookId = created.webhook.id
    const failures = async () => {
      const { webhooks } = ok(await call('listWebhooks', { b_o: book.b_o, catId: t.catId }))
      return webhooks[0]
    }
    const failuresAre = async (count: number) => {
      const listed = await failures()
      return listed.consecutiveFailures === count
    }
    const write = (item: string) =>
      call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: t.catId,
        bypassUrlTrigger: 'false',
        fieldValues: JSON.stringify({ [t.item]: item }),
      }).then(ok)
    outbox.settings.maxAttempts = 1
    try {
      receiver.state.answer = () => 500
      await write('fails')
      await eventually(() => failuresAre(1))
      receiver.state.answer = () => 200
      await write('passes')
      await eventually(() => failuresAre(0))
      const listed = await failures()
      assert.isTrue(listed.active)
      assert.equal(listed.id, webhookId)
    } finally {
      outbox.settings.maxAttempts = savedAttempts
    }
  })
})
