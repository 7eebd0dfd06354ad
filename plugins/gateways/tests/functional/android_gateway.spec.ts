import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { serverUrl } from '#tests/helpers/server'
import { book, client, pick, share, type Client } from '#plugins/books/tests/helpers/books'
import gatewaysConfig from '#plugins/gateways/config'
import { AndroidDeviceService } from '#plugins/gateways/services/android_device_service'
import { gatewayService, spaced, uniquePhone, withPhone } from '../helpers/gateways.js'
import { enqueue, smsOutbox } from '../helpers/sms_outbox.js'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import { hasRedis } from '#tests/helpers/database'
import env from '#start/env'
import { SMS_ENQUEUED_SIGNAL } from '#plugins/gateways/services/android_realtime'

const run = promisify(execFile)
const PRIVATE_TOKEN = 'quire-private-token-for-android-gateway-tests'
const [devices, access] = await Promise.all([
  app.container.make(AndroidDeviceService),
  app.container.make(BookAccessService),
])

/** A request as the app's GatewayApi sends it (ktor + gson): method, path, bearer, JSON body. */
function phone(method: string, path: string, bearer: string | null, body?: unknown) {
  return fetch(`${serverUrl()}/api/mobile/v1${path}`, {
    method,
    headers: {
      'User-Agent': 'me.capcom.smsgateway/1.40.0',
      'Accept': 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(bearer === null ? {} : { Authorization: `Bearer ${bearer}` }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function json(response: Response): Promise<any> {
  return response.json()
}

/** The app's webhook request (its WebhooksService: POST, JSON, the signing headers it always adds). */
function postWebhook(url: string, event: string, payload: Record<string, unknown>, id: string) {
  const body = JSON.stringify({ deviceId: 'ffffffffceb0b1db', event, id, payload, webhookId: id })
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'me.capcom.smsgateway/1.40.0',
      'X-Timestamp': String(Math.floor(Date.now() / 1000)),
      'X-Signature': '0'.repeat(64),
    },
    body,
  })
}

interface Phone {
  id: string
  token: string
  /** The member whose mob1 is `sender`, in `target`, the book the gateway is fixed to. */
  owner: Client
  member: Client
  sender: string
  target: { b_o: string; b_c: string }
  bookId: number
  gatewayPhone: string
}

/** A registered device tied to an allowed gateway fixed to a book (gateway:allow --book --device). */
async function tiedPhone(): Promise<Phone> {
  const registered = await json(
    await phone('POST', '/device', PRIVATE_TOKEN, { name: 'Pixel 7', pushToken: null })
  )
  const owner = await client()
  const member = await client()
  const target = await book(owner)
  await share(owner, target, member)
  const sender = uniquePhone()
  await withPhone(member, sender)
  const gatewayPhone = uniquePhone()
  await gatewayService.allow(gatewayPhone, target)
  const gateway = await gatewayService.find(gatewayPhone)
  await devices.tie(registered.id, Number(gateway.id))
  const bookId = (await access.resolve(target.b_o, target.b_c))!.id
  return { ...registered, owner, member, sender, target, bookId, gatewayPhone }
}

async function webhookUrl(device: { token: string }) {
  const hooks = await json(await phone('GET', '/webhooks', device.token))
  return hooks[0].url as string
}

async function codeOf(response: Response) {
  const body = await json(response)
  return body.code
}

async function stateOf(id: string) {
  const row = await smsOutbox.find(Number(id))
  return row.state
}

async function messagesOf(reader: Client, target: object) {
  const answer = await reader.call({ req: 'getBookMessages', ...target })
  return pick(answer, 'bookMessages') as Record<string, any>[]
}

/** Reads an event stream until `wanted` appears in it (the test's timeout bounds the wait). */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, wanted: string) {
  const decoder = new TextDecoder()
  let seen = ''
  while (!seen.includes(wanted)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`stream ended before ${JSON.stringify(wanted)}: ${seen}`)
    seen += decoder.decode(value, { stream: true })
  }
  return seen
}

test.group('gateways: SMS Gateway for Android, messages, events and webhooks', (group) => {
  group.each.setup(() => {
    const configured = gatewaysConfig.androidPrivateToken
    gatewaysConfig.androidPrivateToken = PRIVATE_TOKEN
    return () => {
      gatewaysConfig.androidPrivateToken = configured
    }
  })

  test('node ace gateway:allow --device ties a registered phone to the number; an unknown id fails', async ({
    assert,
  }) => {
    const registered = await json(
      await phone('POST', '/device', PRIVATE_TOKEN, { name: 'Pixel', pushToken: null })
    )
    assert.deepEqual(await json(await phone('GET', '/webhooks', registered.token)), [])
    const number = uniquePhone()
    const { stdout } = await run(
      process.execPath,
      ['ace', 'gateway:allow', spaced(number), `--device=${registered.id}`],
      { cwd: app.makePath(), env: process.env }
    )
    assert.include(stdout, registered.id)
    const gateway = await gatewayService.find(number)
    const row = await db.from('gateways_android_devices').where('id', registered.id).first()
    assert.equal(Number(row.gateway_id), Number(gateway.id))

    const failed = await run(
      process.execPath,
      ['ace', 'gateway:allow', uniquePhone(), '--device', 'no-such-device-id'],
      { cwd: app.makePath(), env: process.env }
    ).catch((error) => error)
    assert.equal(failed.code, 1)
  }).timeout(60_000)

  test('GET /webhooks lists Quire’s endpoint for sms:received, sms:sent, sms:delivered and sms:failed', async ({
    assert,
  }) => {
    const device = await tiedPhone()
    const response = await phone('GET', '/webhooks', device.token)
    assert.equal(response.status, 200)
    const hooks = await json(response)
    assert.deepEqual(
      hooks.map((hook: any) => hook.event),
      ['sms:received', 'sms:sent', 'sms:delivered', 'sms:failed']
    )
    for (const hook of hooks) {
      assert.equal(hook.deviceId, device.id)
      assert.isString(hook.id)
      assert.match(
        hook.url,
        new RegExp(`/gateways/android/webhook/${device.id.replace(/-/g, '\\-')}\\?key=[\\w-]+$`)
      )
    }
    const refused = await phone('GET', '/webhooks', 'not-a-token')
    assert.equal(refused.status, 401)
  })

  test('sms:received stores the SMS in the gateway’s book as the sender, once per webhook id', async ({
    assert,
  }) => {
    const device = await tiedPhone()
    const url = await webhookUrl(device)
    const payload = {
      messageId: 'abc123',
      message: 'buy milk',
      phoneNumber: spaced(device.sender),
      simNumber: 1,
      receivedAt: '2024-06-22T15:46:11.000+07:00',
    }
    const response = await postWebhook(url, 'sms:received', payload, 'Ey6ECgOkVVFjz3CL48B8C')
    assert.equal(response.status, 200)
    const stored = await json(response)
    assert.isAbove(stored.smid, 0)
    // The app retries a webhook with the same id: the same message.
    const again = await json(
      await postWebhook(url, 'sms:received', payload, 'Ey6ECgOkVVFjz3CL48B8C')
    )
    assert.equal(again.smid, stored.smid)

    const messages = await messagesOf(device.owner, device.target)
    assert.lengthOf(messages, 1)
    assert.equal(messages[0].smid, stored.smid)
    assert.equal(messages[0].u_c, device.member.code)
    assert.equal(messages[0].msg, 'buy milk')
    assert.equal(messages[0].msgMethod, '_sms')
  })

  test('a received SMS refused as a gateway’s sendMsg would be answers its code and stores nothing', async ({
    assert,
  }) => {
    const device = await tiedPhone()
    const url = await webhookUrl(device)
    const stranger = await postWebhook(
      url,
      'sms:received',
      { messageId: 'm1', message: 'hello', phoneNumber: uniquePhone() },
      'stranger-1'
    )
    assert.equal(stranger.status, 422)
    assert.equal(await codeOf(stranger), 'GATEWAY_UNKNOWN_SENDER')
    const notANumber = await postWebhook(
      url,
      'sms:received',
      { messageId: 'm2', message: 'hello', phoneNumber: 'ACME' },
      'bad-number-1'
    )
    assert.equal(notANumber.status, 400)
    assert.equal(await codeOf(notANumber), 'INVALID_PARAMETER')

    const badKey = await postWebhook(
      `${url.split('?')[0]}?key=forged`,
      'sms:received',
      { message: 'hello', phoneNumber: device.sender },
      'forged-1'
    )
    assert.equal(badKey.status, 401)
    const malformed = await fetch(url, { method: 'POST', body: '{not json' })
    assert.equal(malformed.status, 400)
    assert.lengthOf(await messagesOf(device.owner, device.target), 0)

    // A phone no longer tied (its number no longer allowed) is refused.
    await db.from('gateways_sms').where('phone', device.gatewayPhone).update({ allowed: false })
    const untied = await postWebhook(
      url,
      'sms:received',
      { message: 'hello', phoneNumber: device.sender },
      'untied-1'
    )
    assert.equal(untied.status, 403)
    assert.lengthOf(await messagesOf(device.owner, device.target), 0)
  })

  test('GET /message hands the gateway’s SMS to the phone; PATCH /message and the webhooks report their states', async ({
    assert,
  }) => {
    const device = await tiedPhone()
    const to = uniquePhone()
    const texts = ['You are invited', `second ${to}`, `third ${to}`]
    await enqueue({ bookId: device.bookId, to, text: texts[0], kind: 'invitation' })
    await enqueue({ bookId: device.bookId, text: texts[1] })
    await enqueue({ bookId: device.bookId, text: texts[2] })

    const response = await phone('GET', '/message', device.token)
    assert.equal(response.status, 200)
    // Other tests' SMS for books without a gateway of their own may go to this one too (the
    // least loaded rule): only this test's are looked at.
    const mine = (list: any[]) => list.filter((message) => texts.includes(message.message))
    const messages = mine(await json(response))
    assert.deepEqual(
      messages.map((message: any) => message.message),
      texts
    )
    const [first, second, third] = messages
    assert.deepInclude(first, {
      message: 'You are invited',
      textMessage: { text: 'You are invited' },
      phoneNumbers: [to],
      isEncrypted: false,
      withDeliveryReport: true,
      state: 'Pending',
    })
    assert.match(first.id, /^\d+$/)
    assert.isFalse(Number.isNaN(Date.parse(first.createdAt)))
    assert.deepEqual(mine(await json(await phone('GET', '/message', device.token))), [])

    const patched = await phone('PATCH', '/message', device.token, [
      { id: first.id, state: 'Processed', recipients: [{ phoneNumber: to, state: 'Processed' }] },
      { id: second.id, state: 'Sent', recipients: [{ phoneNumber: to, state: 'Sent' }] },
      {
        id: third.id,
        state: 'Failed',
        recipients: [{ phoneNumber: to, state: 'Failed', error: 'RESULT_ERROR_NO_SERVICE' }],
        states: { Failed: '2024-06-22T15:46:11.000Z' },
      },
      // Another server's id: ignored, as the app's own server does.
      {
        id: 'PyDmBQZZXYmyxMwED8Fzy',
        state: 'Sent',
        recipients: [{ phoneNumber: to, state: 'Sent' }],
      },
    ])
    assert.equal(patched.status, 204)
    assert.equal(await stateOf(first.id), 'leased')
    assert.equal(await stateOf(second.id), 'sent')
    assert.equal(await stateOf(third.id), 'failed')
    const failed = await smsOutbox.find(Number(third.id))
    assert.equal(failed.reason, 'RESULT_ERROR_NO_SERVICE')

    const url = await webhookUrl(device)
    const sentAt = new Date().toISOString()
    const base = { phoneNumber: to, simNumber: null }
    for (const [event, id] of [
      ['sms:sent', first.id],
      ['sms:delivered', first.id],
      ['sms:delivered', second.id],
    ]) {
      const answer = await postWebhook(
        url,
        event,
        { ...base, messageId: id, sentAt },
        `${event}-${id}`
      )
      assert.equal(answer.status, 200)
    }
    assert.equal(await stateOf(first.id), 'delivered')
    assert.equal(await stateOf(second.id), 'delivered')
  })

  test('bad message requests answer 400 or 401 and change nothing; a phone not tied gets no message', async ({
    assert,
  }) => {
    const device = await tiedPhone()
    await enqueue({ bookId: device.bookId })
    for (const bearer of ['not-a-token', null]) {
      const refused = await phone('GET', '/message', bearer)
      assert.equal(refused.status, 401)
    }
    for (const body of [
      '{not json',
      [{ id: '1', state: 'Lost', recipients: [{ phoneNumber: '1', state: 'Sent' }] }],
      [{ id: '1', state: 'Sent', recipients: [] }],
      [{ state: 'Sent', recipients: [{ phoneNumber: '1', state: 'Sent' }] }],
    ]) {
      const response = await phone('PATCH', '/message', device.token, body)
      assert.equal(response.status, 400, JSON.stringify(body))
      const refusal = await json(response)
      assert.isString(refusal.message)
    }
    const untied = await json(
      await phone('POST', '/device', PRIVATE_TOKEN, { name: 'Spare', pushToken: null })
    )
    assert.deepEqual(await json(await phone('GET', '/message', untied.token)), [])
    const [row] = await db.from('gateways_sms_outbox').where('book_id', device.bookId)
    assert.equal(row.state, 'queued')
  })

  test('GET /events wakes the phone with MessageEnqueued when an SMS is queued for its gateway', async ({
    assert,
  }) => {
    const device = await tiedPhone()
    const controller = new AbortController()
    const response = await fetch(`${serverUrl()}/api/mobile/v1/events`, {
      headers: { Authorization: `Bearer ${device.token}`, Accept: 'text/event-stream' },
      signal: controller.signal,
    })
    try {
      assert.equal(response.status, 200)
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/)
      const reader = response.body!.getReader()
      // The stream is open (nothing due yet) before the SMS is queued.
      await enqueue({ bookId: device.bookId })
      const frames = await readUntil(reader, 'event: MessageEnqueued\ndata: null\n\n')
      assert.include(frames, 'event: MessageEnqueued')
    } finally {
      controller.abort()
    }

    // Connecting with SMS already due: told at once.
    const again = new AbortController()
    const reconnected = await fetch(`${serverUrl()}/api/mobile/v1/events`, {
      headers: { Authorization: `Bearer ${device.token}` },
      signal: again.signal,
    })
    try {
      await readUntil(reconnected.body!.getReader(), 'event: MessageEnqueued')
    } finally {
      again.abort()
    }
    // A lease that lapses unconfirmed puts the SMS back in the queue and wakes the phone again.
    const kept = gatewaysConfig.smsAckTimeoutMs
    gatewaysConfig.smsAckTimeoutMs = -1000
    try {
      assert.lengthOf(await json(await phone('GET', '/message', device.token)), 1)
    } finally {
      gatewaysConfig.smsAckTimeoutMs = kept
    }
    const third = new AbortController()
    const listening = await fetch(`${serverUrl()}/api/mobile/v1/events`, {
      headers: { Authorization: `Bearer ${device.token}` },
      signal: third.signal,
    })
    try {
      const reader = listening.body!.getReader()
      await readUntil(reader, ':connected')
      await smsOutbox.requeueLapsed()
      await readUntil(reader, 'event: MessageEnqueued')
    } finally {
      third.abort()
    }
    const refused = await fetch(`${serverUrl()}/api/mobile/v1/events`, {
      headers: { Authorization: 'Bearer nope' },
    })
    assert.equal(refused.status, 401)
  })
  test('an SMS queued by another instance wakes the phone held here (the hub signal on Redis)', async ({
    assert,
  }) => {
    const device = await tiedPhone()
    const gateway = await gatewayService.find(device.gatewayPhone)
    const controller = new AbortController()
    const response = await fetch(`${serverUrl()}/api/mobile/v1/events`, {
      headers: { Authorization: `Bearer ${device.token}` },
      signal: controller.signal,
    })
    try {
      const reader = response.body!.getReader()
      await readUntil(reader, ':connected')
      // What another instance's relay publishes on the hub's channel when it queues an SMS.
      const { default: redis } = await import('@adonisjs/redis/services/main')
      await redis.connection().publish(
        `${env.get('REDIS_PREFIX', 'quire:')}socket:hub`,
        JSON.stringify({
          o: 'another-instance',
          k: 'signal',
          t: SMS_ENQUEUED_SIGNAL,
          d: gateway.id,
        })
      )
      const frames = await readUntil(reader, 'event: MessageEnqueued')
      assert.include(frames, 'data: null')
    } finally {
      controller.abort()
    }
  }).skip(!hasRedis(), 'needs Redis (REDIS_HOST): the hub channel joins instances')
})
