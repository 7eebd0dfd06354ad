import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { StampService } from '#core/services/stamp_service'
import app from '@adonisjs/core/services/app'
import { client, expectNok } from '#plugins/books/tests/helpers/books'
import gatewaysConfig from '#plugins/gateways/config'
import settings from '#core/settings/main'
import { call, registeredGateway, uniquePhone, type Gateway } from '../helpers/gateways.js'
import {
  bookWithGateway as makeBookWithGateway,
  enqueue,
  smsOutbox,
  smsRows,
} from '../helpers/sms_outbox.js'

const stamps = await app.container.make(StampService)

/** The books this file made: other files' SMS (a book without a gateway of its own, or none) may reach its gateways. */
const ours = new Set<number>()

async function bookWithGateway() {
  const made = await makeBookWithGateway()
  ours.add(made.bookId)
  return made
}

/** The SMS of this file's books the gateway collects now (getGatewayOutbox's list). */
async function collect(gateway: Gateway): Promise<Record<string, any>[]> {
  const answer = await gateway.call({ req: 'getGatewayOutbox' })
  if (answer.status !== 'ok') throw new Error(JSON.stringify(answer))
  if (answer.sms.length === 0) return []
  const rows = await db
    .from('gateways_sms_outbox')
    .whereIn(
      'id',
      answer.sms.map((sms: { id: number }) => sms.id)
    )
    .select('id', 'book_id')
  const mine = new Set(rows.filter((row) => ours.has(Number(row.book_id))).map((row) => row.id))
  return answer.sms.filter((sms: { id: number }) => mine.has(sms.id))
}

async function stateOf(id: number) {
  const row = await smsOutbox.find(id)
  return row.state
}

/** Changes a setting for one test; the returned function puts it back. */
function setting<K extends 'smsAckTimeoutMs'>(key: K, value: number) {
  const kept = gatewaysConfig[key]
  gatewaysConfig[key] = value
  return () => {
    gatewaysConfig[key] = kept
  }
}

test.group('gateways: outbound SMS queue (getGatewayOutbox, ackGatewayOutbox)', () => {
  test("an SMS about a book goes to the book's gateway, which collects it once", async ({
    assert,
  }) => {
    const { bookId, gateway } = await bookWithGateway()
    const other = await bookWithGateway()
    const to = uniquePhone()
    await enqueue({ to, text: 'Dinner at 8', bookId, kind: 'reminder' })

    const answer = await gateway.call({ req: 'getGatewayOutbox' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.equal(answer.ackSeconds, gatewaysConfig.smsAckTimeoutMs / 1000)
    const sms = answer.sms.filter((item: { to: string }) => item.to === to)
    assert.lengthOf(sms, 1)
    assert.deepInclude(sms[0], { to, msg: 'Dinner at 8', kind: 'reminder', attempt: 1 })
    assert.isNumber(sms[0].id)
    const [row] = await smsRows({ id: sms[0].id })
    assert.equal(row.state, 'leased')

    // Leased: neither the same gateway nor another one gets it again.
    assert.deepEqual(await collect(gateway), [])
    assert.deepEqual(await collect(other.gateway), [])
  })

  test('the same idempotency key twice is one SMS; a rolled-back write queues nothing', async ({
    assert,
  }) => {
    const { bookId, gateway } = await bookWithGateway()
    const key = `copy:${bookId}:${Date.now()}`
    await enqueue({ bookId, idempotencyKey: key, text: 'first' })
    await enqueue({ bookId, idempotencyKey: key, text: 'second' })
    const rows = await smsRows({ idempotency_key: key })
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].text, 'first')

    const failing = stamps.write(async ({ trx, afterCommit }) => {
      await smsOutbox.enqueue(
        trx,
        { to: uniquePhone(), text: 'never', kind: 'copy', idempotencyKey: `${key}:rb`, bookId },
        afterCommit
      )
      throw new Error('the write fails after queueing')
    })
    await assert.rejects(() => failing)
    assert.lengthOf(await smsRows({ idempotency_key: `${key}:rb` }), 0)
    assert.lengthOf(await collect(gateway), 1)
  })

  test('an SMS not due yet (notBefore) is not handed out', async ({ assert }) => {
    const { bookId, gateway } = await bookWithGateway()
    await enqueue({ bookId, notBefore: Date.now() + 3600_000 })
    assert.deepEqual(await collect(gateway), [])
  })

  test('acknowledgements: sent, then delivered; failed with a reason; final states stay', async ({
    assert,
  }) => {
    const { bookId, gateway } = await bookWithGateway()
    await enqueue({ bookId })
    await enqueue({ bookId })
    const [first, second] = await collect(gateway)

    const sent = await gateway.call({ req: 'ackGatewayOutbox', ids: `${first.id}`, state: 'sent' })
    assert.deepInclude(sent, { status: 'ok', updated: 1 })
    assert.equal(await stateOf(first.id), 'sent')
    await gateway.call({ req: 'ackGatewayOutbox', ids: `${first.id}`, state: 'delivered' })
    assert.equal(await stateOf(first.id), 'delivered')

    const failed = await gateway.call({
      req: 'ackGatewayOutbox',
      ids: JSON.stringify([second.id]),
      state: 'failed',
      reason: 'RESULT_ERROR_NO_SERVICE',
    })
    assert.deepInclude(failed, { status: 'ok', updated: 1 })
    const row = await smsOutbox.find(second.id)
    assert.equal(row.state, 'failed')
    assert.equal(row.reason, 'RESULT_ERROR_NO_SERVICE')

    // A repeat, or a state that would move a final one back, changes nothing.
    const back = await gateway.call({
      req: 'ackGatewayOutbox',
      ids: `${first.id},${second.id}`,
      state: 'sent',
    })
    assert.deepInclude(back, { status: 'ok', updated: 0 })
    assert.equal(await stateOf(first.id), 'delivered')
    assert.equal(await stateOf(second.id), 'failed')
  })

  test('bad acknowledgements answer their nok and write nothing', async ({ assert }) => {
    const { bookId, gateway } = await bookWithGateway()
    const other = await bookWithGateway()
    await enqueue({ bookId })
    await enqueue({ bookId: other.bookId })
    const [mine] = await collect(gateway)
    const [theirs] = await collect(other.gateway)

    const ack = (params: Record<string, unknown>) =>
      gateway.call({ req: 'ackGatewayOutbox', ...params })
    expectNok(assert, await ack({ state: 'sent' }), 'MISSING_PARAMETER')
    expectNok(assert, await ack({ ids: `${mine.id}` }), 'MISSING_PARAMETER')
    const badState = await ack({ ids: `${mine.id}`, state: 'lost' })
    expectNok(assert, badState, 'INVALID_PARAMETER')
    assert.equal(badState.field, 'state')
    expectNok(assert, await ack({ ids: 'one', state: 'sent' }), 'INVALID_PARAMETER')
    // Another gateway's SMS, even beside one of its own: NOT_FOUND, neither is touched.
    const foreign = await ack({ ids: `${mine.id},${theirs.id}`, state: 'sent' })
    expectNok(assert, foreign, 'NOT_FOUND')
    expectNok(assert, await ack({ ids: '999999999', state: 'sent' }), 'NOT_FOUND')
    assert.equal(await stateOf(mine.id), 'leased')
    assert.equal(await stateOf(theirs.id), 'leased')
    expectNok(
      assert,
      await gateway.call({ req: 'getGatewayOutbox', limit: 0 }),
      'INVALID_PARAMETER'
    )
  })

  test('an SMS nobody confirms goes back to the queue, at most GATEWAYS_SMS_MAX_ATTEMPTS hand-outs, then fails', async ({
    assert,
    cleanup,
  }) => {
    // Leases that lapse at once (no waiting): each collection finds the previous lease lapsed.
    cleanup(setting('smsAckTimeoutMs', -1000))
    // A declared runtime setting (docs/settings.md): changed as the Settings page does.
    await settings.update('gateways.smsMaxAttempts', 2)
    cleanup(async () => {
      await settings.update('gateways.smsMaxAttempts', null)
    })
    const { bookId, gateway } = await bookWithGateway()
    await enqueue({ bookId })
    const [first] = await collect(gateway)
    assert.equal(first.attempt, 1)
    const [again] = await collect(gateway)
    assert.equal(again.id, first.id)
    assert.equal(again.attempt, 2)
    assert.deepEqual(await collect(gateway), [])
    const row = await smsOutbox.find(first.id)
    assert.equal(row.state, 'failed')
    assert.match(row.reason, /unconfirmed/)

    // Failed is final: a late report changes nothing.
    await gateway.call({ req: 'ackGatewayOutbox', ids: `${first.id}`, state: 'delivered' })
    assert.equal(await stateOf(first.id), 'failed')
  })

  test('without a book: the least loaded allowed gateway without a fixed book', async ({
    assert,
  }) => {
    // At least one gateway without a fixed book exists.
    await registeredGateway()
    const chosen = await smsOutbox.chooseGateway(db.connection(), null)
    const loads = await db
      .from('gateways_sms as g')
      .where('g.allowed', true)
      .whereNull('g.book_owner')
      .whereNull('g.session_book_owner')
      .select('g.id')
      .select(
        db.raw(
          "(SELECT COUNT(*) FROM gateways_sms_outbox o WHERE o.gateway_id = g.id AND o.state IN ('queued', 'leased')) AS n"
        )
      )
    const least = Math.min(...loads.map((row) => Number(row.n)))
    const chosenLoad = loads.find((row) => Number(row.id) === chosen)
    assert.exists(chosenLoad)
    assert.equal(Number(chosenLoad!.n), least)

    // Loading the chosen one moves the next SMS elsewhere when another is as free.
    await enqueue({})
    const next = await smsOutbox.chooseGateway(db.connection(), null)
    if (loads.filter((row) => Number(row.n) === least).length > 1) assert.notEqual(next, chosen)
  })

  test('only a gateway may collect or acknowledge: a user session, an ended session and another o_u are refused', async ({
    assert,
  }) => {
    const { bookId, gateway } = await bookWithGateway()
    await enqueue({ bookId })
    const user = await client()
    expectNok(assert, await user.call({ req: 'getGatewayOutbox' }), 'INVALID_SESSKEY')
    expectNok(
      assert,
      await user.call({ req: 'ackGatewayOutbox', ids: '1', state: 'sent' }),
      'INVALID_SESSKEY'
    )
    expectNok(assert, await call({ req: 'getGatewayOutbox' }), 'MISSING_PARAMETER')
    expectNok(
      assert,
      await call({ req: 'getGatewayOutbox', o_u: uniquePhone(), sesskey: gateway.sesskey }),
      'USER_MISMATCH'
    )
    await gateway.call({ req: 'unregisterSMSGateway' })
    expectNok(assert, await gateway.call({ req: 'getGatewayOutbox' }), 'INVALID_SESSKEY')
    const [row] = await smsRows({ book_id: bookId })
    assert.equal(row.state, 'queued')
    assert.equal(row.attempts, 0)
  })
})
