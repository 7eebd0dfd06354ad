import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { rpc } from '#tests/helpers/rpc'
import { attached, ensureSocketEndpoint } from '#tests/functional/socket/socket_client'
import { book, client, expectNok, pick, share } from '#plugins/books/tests/helpers/books'
import gatewaysConfig from '#plugins/gateways/config'
import {
  call,
  gatewayOf,
  gatewayService,
  registeredGateway,
  spaced,
  uniquePhone,
  withPhone,
} from '../helpers/gateways.js'

const run = promisify(execFile)

const gatewayRow = (phone: string) => db.from('gateways_sms').where('phone', phone).first()
async function keyHashOf(phone: string) {
  const row = await gatewayRow(phone)
  return row.key_hash
}
async function countGateways() {
  const [count] = await db.from('gateways_sms').count('* as n')
  return Number(count.n)
}

async function messagesOf(reader: Awaited<ReturnType<typeof client>>, target: object) {
  const answer = await reader.call({ req: 'getBookMessages', ...target })
  if (answer.status !== 'ok') throw new Error(JSON.stringify(answer))
  return pick(answer, 'bookMessages') as Record<string, any>[]
}

/** A book of `owner` that `member` joined, and a gateway fixed to it. */
async function fixedBookGateway() {
  const owner = await client()
  const member = await client()
  const target = await book(owner)
  await share(owner, target, member)
  const phone = uniquePhone()
  await withPhone(member, phone)
  const gateway = await registeredGateway({ book: target })
  return { owner, member, target, phone, gateway }
}

test.group('gateways: registerSMSGateway', () => {
  test('a number no administrator allowed is recorded as pending and answers GATEWAY_PENDING', async ({
    assert,
  }) => {
    const phone = uniquePhone()
    const answer = await rpc({
      req: 'registerSMSGateway',
      o_u: spaced(phone),
      appname: 'SMS Gateway',
      b_o: 'someone',
      b_c: 'inbox',
    })
    assert.equal(answer.status, 200)
    assert.equal(answer.contentType, 'application/json')
    expectNok(assert, answer.body, 'GATEWAY_PENDING')
    assert.notProperty(answer.body, 'sesskey')
    const row = await gatewayRow(phone)
    assert.isFalse(Boolean(row.allowed))
    assert.equal(row.appname, 'SMS Gateway')
    assert.equal(row.requested_book_owner, 'someone')
    assert.equal(row.requested_book_code, 'inbox')
    assert.isNull(row.key_hash)

    // Asking again keeps one pending row per number.
    expectNok(assert, await call({ req: 'registerSMSGateway', o_u: phone }), 'GATEWAY_PENDING')
    assert.lengthOf(await db.from('gateways_sms').where('phone', phone), 1)
  })

  test('an allowed number gets a sesskey bound to the gateway, not to a user', async ({
    assert,
  }) => {
    const phone = uniquePhone()
    await gatewayService.allow(phone, null)
    const answer = await call({ req: 'registerSMSGateway', o_u: phone, appname: 'SMS Gateway' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.match(answer.sesskey, /^gw-(\w{4}-){6}\w{4}$/)
    const row = await gatewayRow(phone)
    assert.isTrue(Boolean(row.allowed))
    assert.isString(row.key_hash)
    assert.notEqual(row.key_hash, answer.sesskey)

    // A user operation refuses it: it names no user session.
    const asUser = await call({ req: 'getUserInfo', o_u: phone, sesskey: answer.sesskey })
    expectNok(assert, asUser, 'INVALID_SESSKEY')
  })

  test('numbers are compared in E.164, national forms read in GATEWAYS_DEFAULT_REGION', async ({
    assert,
    cleanup,
  }) => {
    const phone = uniquePhone()
    await gatewayService.allow(spaced(phone), null)
    const row = await gatewayRow(phone)
    assert.equal(row.phone, phone)
    const international = await call({ req: 'registerSMSGateway', o_u: `00${phone.slice(1)}` })
    assert.equal(international.status, 'ok', JSON.stringify(international))

    const national = `0${phone.slice(3)}`
    const region = gatewaysConfig.defaultRegion
    cleanup(() => {
      gatewaysConfig.defaultRegion = region
    })
    gatewaysConfig.defaultRegion = undefined
    expectNok(assert, await call({ req: 'registerSMSGateway', o_u: national }), 'INVALID_PARAMETER')
    gatewaysConfig.defaultRegion = 'FR'
    const answer = await call({ req: 'registerSMSGateway', o_u: national })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    // The national form works as o_u of the gateway's requests too.
    const gateway = gatewayOf(national, answer.sesskey)
    const ended = await gateway.call({ req: 'unregisterSMSGateway' })
    assert.equal(ended.status, 'ok')
  })

  test('a number that is not one answers INVALID_PARAMETER and stores nothing', async ({
    assert,
  }) => {
    const before = await countGateways()
    for (const number of ['not-a-phone', '+336123', '+33 6 12', '12'.repeat(30)]) {
      const answer = await call({ req: 'registerSMSGateway', o_u: number, appname: 'x' })
      expectNok(assert, answer, 'INVALID_PARAMETER')
      assert.equal(answer.field, 'o_u')
    }
    expectNok(assert, await call({ req: 'registerSMSGateway', appname: 'x' }), 'MISSING_PARAMETER')
    assert.equal(await countGateways(), before)
  })

  test('b_o without b_c (or b_c without b_o) answers MISSING_PARAMETER and stores nothing', async ({
    assert,
  }) => {
    const phone = uniquePhone()
    const noCode = await call({ req: 'registerSMSGateway', o_u: phone, b_o: 'someone' })
    expectNok(assert, noCode, 'MISSING_PARAMETER')
    assert.equal(noCode.field, 'b_c')
    const noOwner = await call({ req: 'registerSMSGateway', o_u: phone, b_c: 'inbox' })
    expectNok(assert, noOwner, 'MISSING_PARAMETER')
    assert.equal(noOwner.field, 'b_o')
    assert.isNull(await gatewayRow(phone))
  })

  test('an allowed gateway may ask for an existing book, not an unknown one, nor another than the one fixed', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    const other = await book(owner)

    const free = uniquePhone()
    await gatewayService.allow(free, null)
    const unknown = await call({
      req: 'registerSMSGateway',
      o_u: free,
      b_o: owner.code,
      b_c: 'nope',
    })
    expectNok(assert, unknown, 'NOT_FOUND')
    assert.isNull(await keyHashOf(free))
    const asked = await call({ req: 'registerSMSGateway', o_u: free, ...target })
    assert.equal(asked.status, 'ok', JSON.stringify(asked))
    const registered = await gatewayRow(free)
    assert.equal(registered.session_book_code, target.b_c)

    const fixed = uniquePhone()
    await gatewayService.allow(fixed, target)
    const refused = await call({ req: 'registerSMSGateway', o_u: fixed, ...other })
    expectNok(assert, refused, 'INVALID_PARAMETER')
    assert.isNull(await keyHashOf(fixed))
    const same = await call({ req: 'registerSMSGateway', o_u: fixed, ...target })
    assert.equal(same.status, 'ok', JSON.stringify(same))
  })

  test('registering again replaces the previous sesskey', async ({ assert }) => {
    const { target, phone: sender, gateway } = await fixedBookGateway()
    const again = await call({ req: 'registerSMSGateway', o_u: gateway.phone })
    assert.equal(again.status, 'ok')
    const old = await gateway.call({ req: 'sendMsg', u_c: sender, msg: 'old key' })
    expectNok(assert, old, 'INVALID_SESSKEY')
    const fresh = await gatewayOf(gateway.phone, again.sesskey).call({
      req: 'sendMsg',
      u_c: sender,
      msg: 'new key',
    })
    assert.equal(fresh.status, 'ok', JSON.stringify(fresh))
    assert.isAbove(fresh.createMessageId, 0)
    assert.isDefined(target)
  })

  test('node ace gateway:allow <phone> --book <b_o>/<b_c> allows the number with its book', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    const phone = uniquePhone()
    expectNok(assert, await call({ req: 'registerSMSGateway', o_u: phone }), 'GATEWAY_PENDING')

    const { stdout } = await run(
      process.execPath,
      ['ace', 'gateway:allow', spaced(phone), '--book', `${target.b_o}/${target.b_c}`],
      { cwd: app.makePath(), env: process.env }
    )
    assert.include(stdout, phone)
    const row = await gatewayRow(phone)
    assert.isTrue(Boolean(row.allowed))
    assert.equal(row.book_owner, target.b_o)
    assert.equal(row.book_code, target.b_c)
    const registered = await call({ req: 'registerSMSGateway', o_u: phone })
    assert.equal(registered.status, 'ok')

    // An unknown book is refused, and the number stays as it was.
    const other = uniquePhone()
    const failed = await run(
      process.execPath,
      ['ace', 'gateway:allow', other, '--book', `${owner.code}/nope`],
      { cwd: app.makePath(), env: process.env }
    ).catch((error) => error)
    assert.equal(failed.code, 1)
    assert.isNull(await gatewayRow(other))
  }).timeout(60_000)
})

test.group('gateways: sendMsg from a gateway', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('stores the message as the user owning the sender’s number, in the fixed book, through the normal path', async ({
    assert,
  }) => {
    const { owner, member, target, phone, gateway } = await fixedBookGateway()
    const socket = await attached(owner.session)
    try {
      const uuid = randomUUID()
      const answer = await gateway.call({
        req: 'sendMsg',
        u_c: spaced(phone),
        msg: 'groceries from the phone',
        uuid,
      })
      assert.equal(answer.status, 'ok', JSON.stringify(answer))
      assert.isAbove(answer.createMessageId, 0)
      assert.isNumber(answer.sstamp)

      const [message] = await messagesOf(owner, target)
      assert.equal(message.smid, answer.createMessageId)
      assert.equal(message.u_c, member.code)
      // A fixed book: the first word is part of the text.
      assert.equal(message.msg, 'groceries from the phone')
      assert.equal(message.msgMethod, '_sms')
      const pushed = await socket.next((frame) => frame.type === 1 && frame.uuid === uuid)
      assert.equal(pushed.smid, answer.createMessageId)
      assert.equal(pushed.u_c, member.code)
    } finally {
      await socket.close()
    }
  })

  test('without a fixed book, the first word names the sender’s book and is removed from the text', async ({
    assert,
  }) => {
    const sender = await client()
    const phone = uniquePhone()
    await withPhone(sender, phone)
    const own = await book(sender)
    const gateway = await registeredGateway()
    const answer = await gateway.call({
      req: 'sendMsg',
      u_c: phone,
      msg: `${own.b_c}   buy milk\nand eggs`,
    })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const [message] = await messagesOf(sender, own)
    assert.equal(message.smid, answer.createMessageId)
    assert.equal(message.msg, 'buy milk\nand eggs')
    assert.equal(message.u_c, sender.code)
  })

  test('the sender’s mob2 identifies them too, whatever its spacing', async ({ assert }) => {
    const sender = await client()
    const own = await book(sender)
    const phone = uniquePhone()
    sender.user.merge({ prefs: { ...sender.user.prefs, mob2: spaced(phone) } })
    await sender.user.save()
    const gateway = await registeredGateway()
    const answer = await gateway.call({ req: 'sendMsg', u_c: phone, msg: `${own.b_c} via mob2` })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const [message] = await messagesOf(sender, own)
    assert.equal(message.msg, 'via mob2')
    assert.equal(message.u_c, sender.code)
  })

  test('an unknown sender, an unknown book or a sender who is not a member answers a nok and stores nothing', async ({
    assert,
  }) => {
    const { owner, target, gateway } = await fixedBookGateway()
    const stranger = await client()
    const strangerPhone = uniquePhone()
    await withPhone(stranger, strangerPhone)
    const { length: before } = await messagesOf(owner, target)

    const unknown = await gateway.call({ req: 'sendMsg', u_c: uniquePhone(), msg: 'who am I' })
    expectNok(assert, unknown, 'GATEWAY_UNKNOWN_SENDER')
    const notMember = await gateway.call({ req: 'sendMsg', u_c: strangerPhone, msg: 'let me in' })
    expectNok(assert, notMember, 'NOT_FOUND')
    const notPhone = await gateway.call({ req: 'sendMsg', u_c: 'alice', msg: 'x' })
    expectNok(assert, notPhone, 'INVALID_PARAMETER')
    assert.equal(notPhone.field, 'u_c')
    expectNok(assert, await gateway.call({ req: 'sendMsg', msg: 'x' }), 'MISSING_PARAMETER')
    assert.lengthOf(await messagesOf(owner, target), before)

    const free = await registeredGateway()
    const strangerBooks = await book(stranger)
    const noBook = await free.call({ req: 'sendMsg', u_c: strangerPhone, msg: 'nosuchbook hello' })
    expectNok(assert, noBook, 'NOT_FOUND')
    const foreign = await free.call({
      req: 'sendMsg',
      u_c: strangerPhone,
      msg: `${target.b_c} hello`,
      b_o: target.b_o,
    })
    expectNok(assert, foreign, 'NOT_FOUND')
    assert.lengthOf(await messagesOf(stranger, strangerBooks), 0)
    assert.lengthOf(await messagesOf(owner, target), before)
  })

  test('a gateway’s sesskey needs its own number as o_u and serves only gateway operations', async ({
    assert,
  }) => {
    const { owner, target, phone, gateway } = await fixedBookGateway()
    const mismatch = await call({
      req: 'sendMsg',
      o_u: uniquePhone(),
      sesskey: gateway.sesskey,
      u_c: phone,
      msg: 'x',
    })
    expectNok(assert, mismatch, 'USER_MISMATCH')
    expectNok(
      assert,
      await gateway.call({ req: 'getBookMessages', u_c: phone, ...target }),
      'INVALID_SESSKEY'
    )
    // A gateway fixed to a book may not name another.
    const elsewhere = await gateway.call({ req: 'sendMsg', u_c: phone, msg: 'x', b_c: 'other' })
    expectNok(assert, elsewhere, 'RESTRICTED_SESSION')
    // A user's sesskey is not a gateway's.
    const asUser = await owner.call({ req: 'unregisterSMSGateway' })
    expectNok(assert, asUser, 'INVALID_SESSKEY')
    assert.lengthOf(await messagesOf(owner, target), 0)
  })

  test('unregisterSMSGateway ends the gateway’s session', async ({ assert }) => {
    const { owner, target, phone, gateway } = await fixedBookGateway()
    const answer = await gateway.call({ req: 'unregisterSMSGateway' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.isNull(await keyHashOf(gateway.phone))
    expectNok(
      assert,
      await gateway.call({ req: 'sendMsg', u_c: phone, msg: 'after the end' }),
      'INVALID_SESSKEY'
    )
    expectNok(assert, await gateway.call({ req: 'unregisterSMSGateway' }), 'INVALID_SESSKEY')
    assert.lengthOf(await messagesOf(owner, target), 0)
  })

  test('a sender past GATEWAYS_RATE_PER_SENDER is refused with RATE_LIMITED and nothing is stored', async ({
    assert,
  }) => {
    const { owner, target, phone, gateway } = await fixedBookGateway()
    for (let index = 0; index < gatewaysConfig.ratePerSender; index++) {
      const answer = await gateway.call({ req: 'sendMsg', u_c: phone, msg: `m${index}` })
      assert.equal(answer.status, 'ok', JSON.stringify(answer))
    }
    const refused = await gateway.call({ req: 'sendMsg', u_c: phone, msg: 'one too many' })
    expectNok(assert, refused, 'RATE_LIMITED')
    assert.isAbove(refused.retryAfter, 0)
    assert.lengthOf(await messagesOf(owner, target), gatewaysConfig.ratePerSender)

    // Another sender through the same gateway is not limited by this one.
    const other = await client()
    const otherPhone = uniquePhone()
    await withPhone(other, otherPhone)
    await share(owner, target, other)
    const answer = await gateway.call({ req: 'sendMsg', u_c: otherPhone, msg: 'me too' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
  }).timeout(60_000)

  test('a gateway past GATEWAYS_RATE_PER_GATEWAY is refused with RATE_LIMITED', async ({
    assert,
  }) => {
    const { owner, target, phone, gateway } = await fixedBookGateway()
    // The registration was the gateway's first request.
    let accepted = 1
    let refused: Record<string, any> | null = null
    while (!refused && accepted <= gatewaysConfig.ratePerGateway) {
      const answer = await gateway.call({ req: 'sendMsg', u_c: 'not a number', msg: 'x' })
      if (answer.errorCode === 'RATE_LIMITED') refused = answer
      else accepted++
    }
    assert.equal(accepted, gatewaysConfig.ratePerGateway)
    assert.isNotNull(refused)
    assert.isAbove(refused!.retryAfter, 0)
    const valid = await gateway.call({ req: 'sendMsg', u_c: phone, msg: 'valid but late' })
    expectNok(assert, valid, 'RATE_LIMITED')
    assert.lengthOf(await messagesOf(owner, target), 0)
  }).timeout(60_000)
})
