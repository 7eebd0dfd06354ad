import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { OutboxService } from '#core/outbox/outbox_service'
import { pageOf, signedInAdmin } from '#tests/functional/admin/console_client'
import { book, client } from '#plugins/books/tests/helpers/books'
import { uniquePhone } from '#plugins/gateways/tests/helpers/gateways'

const statusOf = (answer: { status: number }) => answer.status

/** The errors a refused form flashed, as the page after the redirect shows them. */
async function errorsAfter(
  session: Awaited<ReturnType<typeof signedInAdmin>>['client'],
  post: () => Promise<{ status: number; location: string | null }>
) {
  const answer = await post()
  if (answer.status !== 302 && answer.status !== 303)
    throw new Error(`expected a redirect, got ${answer.status}`)
  const page = await pageOf(session, '/admin/gateways/sms')
  return (page.props.errors ?? {}) as Record<string, string>
}

test.group('gateways console: refusals write nothing', () => {
  test('allowing a bad number, a malformed book or an unknown one is a form error', async ({
    assert,
  }) => {
    const { client: session } = await signedInAdmin()
    await session.get('/admin/gateways/sms')
    const count = async () => {
      const [counted] = await db.from('gateways_sms').count('* as total')
      return Number(counted.total)
    }
    const before = await count()

    const badPhone = await errorsAfter(session, () =>
      session.post('/admin/gateways/sms/allow', { phone: '12' })
    )
    assert.match(badPhone.form, /not a valid phone number/)
    const badBook = await errorsAfter(session, () =>
      session.post('/admin/gateways/sms/allow', { phone: uniquePhone(), book: 'no slash' })
    )
    assert.property(badBook, 'book')
    const unknownBook = await errorsAfter(session, () =>
      session.post('/admin/gateways/sms/allow', { phone: uniquePhone(), book: 'nobody/nothing' })
    )
    assert.match(unknownBook.form, /Book not found/)
    assert.equal(await count(), before)

    // A good one is allowed, with its book.
    const owner = await client()
    const target = await book(owner)
    const phone = uniquePhone()
    const allowed = await errorsAfter(session, () =>
      session.post('/admin/gateways/sms/allow', { phone, book: `${target.b_o}/${target.b_c}` })
    )
    assert.deepEqual(allowed, {})
    const row = await db.from('gateways_sms').where('phone', phone).first()
    assert.isTrue(Boolean(Number(row.allowed)))
    assert.equal(row.book_code, target.b_c)
  })

  test('unknown gateways, devices and deliveries answer 404 or a form error; a webhook delivery is not retried here', async ({
    assert,
  }) => {
    const { client: session } = await signedInAdmin()
    await session.get('/admin/gateways/sms')
    assert.equal(statusOf(await session.get('/admin/gateways/sms/999999999')), 404)
    assert.equal(statusOf(await session.get('/admin/gateways/sms/x')), 404)
    assert.equal(statusOf(await session.post('/admin/gateways/sms/999999999/unregister')), 404)
    assert.equal(statusOf(await session.post('/admin/gateways/devices/999999999/deactivate')), 404)
    assert.equal(statusOf(await session.get('/admin/gateways/deliveries/999999999')), 404)

    // A webhook's delivery lives in the same outbox: the gateways pages neither show nor retry it.
    const outbox = await app.container.make(OutboxService)
    const key = `console-webhook-${Date.now()}`
    const callbacks: (() => unknown)[] = []
    await db.transaction((trx) =>
      outbox.enqueue(
        trx,
        [
          {
            channel: 'webhook',
            recipient: 'subscription:0',
            idempotencyKey: key,
            eventType: 'test',
            payload: {},
            maxAttempts: 1,
          },
        ],
        (callback) => callbacks.push(callback)
      )
    )
    const delivery = await db
      .from('outbox_deliveries')
      .where('channel', 'webhook')
      .where('idempotency_key', key)
      .first()
    const before = { state: delivery.state, updated: Number(delivery.updated_at) }
    assert.equal(statusOf(await session.get(`/admin/gateways/deliveries/${delivery.id}`)), 404)
    await session.post(`/admin/gateways/deliveries/${delivery.id}/retry`)
    const page = await pageOf(session, '/admin/gateways/deliveries')
    assert.match(page.props.errors.form, /cannot be retried/)
    const after = await db.from('outbox_deliveries').where('id', delivery.id).first()
    assert.deepEqual({ state: after.state, updated: Number(after.updated_at) }, before)
    await db.from('outbox_deliveries').where('id', delivery.id).delete()
  })

  test('a bad filter or page is the default list (or the last page), never an error page', async ({
    assert,
  }) => {
    const { client: session } = await signedInAdmin()
    const deliveries = await pageOf(
      session,
      '/admin/gateways/deliveries?channel=webhook&state=lost&page=-3&smsState=gone'
    )
    assert.deepEqual(deliveries.props.filter, { channel: '', state: '', smsState: '' })
    assert.equal(deliveries.props.deliveries.page, 1)
    const mail = await pageOf(session, '/admin/gateways/mail?outcome=maybe&page=999999')
    assert.equal(mail.props.outcome, '')
    // Past the end: the last page.
    const { total, perPage } = mail.props.mails
    assert.equal(mail.props.mails.page, Math.max(1, Math.ceil(total / perPage)))
  })
})
