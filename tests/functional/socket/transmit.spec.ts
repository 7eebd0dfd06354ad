import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { Transmit } from '@adonisjs/transmit-client'
import { serverUrl } from '#tests/helpers/server'
import type { Session } from '#tests/helpers/users'
import { member, sharedBook } from './fixtures.js'
import { NodeEventSource } from './event_source.js'

function client(credentials?: Pick<Session, 'o_u' | 'sesskey'>) {
  return new Transmit({
    baseUrl: serverUrl(),
    maxReconnectAttempts: 1,
    eventSourceFactory: (url) => new NodeEventSource(url) as unknown as EventSource,
    beforeSubscribe: (request) => {
      if (!credentials) return
      request.headers.set('X-O-U', credentials.o_u)
      request.headers.set('X-Sesskey', credentials.sesskey)
    },
  })
}

async function subscribe(channel: string, credentials?: Pick<Session, 'o_u' | 'sesskey'>) {
  const uid = randomUUID()
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (credentials)
    Object.assign(headers, { 'X-O-U': credentials.o_u, 'X-Sesskey': credentials.sesskey })
  const response = await fetch(`${serverUrl()}/__transmit/subscribe`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ uid, channel }),
  })
  await response.text()
  return response.status
}

test.group('Transmit (SSE) channels per user', () => {
  test('the socket messages of a user are published on users/<u_c> to an authorized subscriber', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const transmit = client(alice.session)
    const subscription = transmit.subscription(`users/${alice.code}`)
    const received: Record<string, any>[] = []
    subscription.onMessage((payload: Record<string, any>) => received.push(payload))
    await subscription.create()
    assert.isTrue(subscription.isCreated)

    const uuid = randomUUID()
    const sent = await bob.call({ req: 'sendMsg', ...book, msg: 'to alice over SSE', uuid })
    assert.equal(sent.status, 'ok')
    const deadline = Date.now() + 3000
    while (
      Date.now() < deadline &&
      !(received.some((frame) => frame.type === 1) && received.some((frame) => frame.type === 8))
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const message = received.find((frame) => frame.type === 1)
    assert.exists(message, JSON.stringify(received))
    assert.equal(message!.uuid, uuid)
    assert.equal(message!.msg, 'to alice over SSE')
    assert.deepEqual(
      received.find((frame) => frame.type === 8),
      { type: 8, u_c: alice.code }
    )
    transmit.close()
  })

  test("subscribing to a user's channel needs that user's (or a delegate's) o_u and sesskey", async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    assert.equal(await subscribe(`users/${alice.code}`), 400)
    assert.equal(await subscribe(`users/${alice.code}`, bob.session), 400)
    assert.equal(
      await subscribe(`users/${alice.code}`, { o_u: alice.code, sesskey: 'AAAA-BBBB' }),
      400
    )
    assert.equal(await subscribe(`users/${alice.code}`, alice.session), 204)
  })

  test('only the canonical spelling of a user channel can be subscribed to', async ({ assert }) => {
    const alice = await member()
    const bob = await member()
    for (const channel of [
      `users//${alice.code}`,
      `users/${alice.code}/x`,
      `users/${bob.code}/../${alice.code}`,
      `users/${alice.code}/`,
      `/users/${alice.code}`,
      `users/./${alice.code}`,
      `users/${alice.code}%2F`,
      `Users/${alice.code}`,
      `${alice.code}`,
      'public',
      'users/..',
    ]) {
      assert.equal(await subscribe(channel, alice.session), 400, channel)
    }
    assert.equal(await subscribe(`users/${alice.code}`, alice.session), 204)
  })
})
