import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { hasRedis, onMysql } from '#tests/helpers/database'
import { login } from '#tests/helpers/users'
import { attached } from './socket_client.js'
import { Transmit } from '@adonisjs/transmit-client'
import { invite, member, sharedBook } from './fixtures.js'
import { startInstance, type Instance } from './instances.js'
import { NodeEventSource } from './event_source.js'

const PORT = Number(process.env.SOCKET_TEST_PORT ?? 39600)

test.group('socket: several instances (MariaDB + Redis)', (group) => {
  const instances: Instance[] = []

  group.setup(async () => {
    if (!onMysql() || !hasRedis()) return
    // Two Quire processes on one database and one Redis (migrated by the test bootstrap).
    instances.push(...(await Promise.all([startInstance(PORT), startInstance(PORT + 1)])))
  })
  group.teardown(async () => {
    await Promise.all(instances.map((instance) => instance.stop()))
  })

  const needs = () =>
    !onMysql() || !hasRedis() ? 'needs DB_CONNECTION=mysql and REDIS_HOST (skipped)' : null

  test('a message sent to one instance reaches a socket held by the other', async ({ assert }) => {
    const [first, second] = instances
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const [aliceSocket, bobSocket] = await Promise.all([
      attached(alice.session, first.url),
      attached(bob.session, second.url),
    ])
    const uuid = randomUUID()
    aliceSocket.send({ type: 1, uuid, smid: 0, msg: 'across instances', ...book })
    const ack = await aliceSocket.ofType(2)
    assert.equal(ack.status, 'ok')
    const pushed = await bobSocket.next((frame) => frame.type === 1 && frame.uuid === uuid, 5000)
    assert.equal(pushed.smid, ack.smid)
    assert.equal(pushed.msg, 'across instances')
    const ready = await bobSocket.ofType(8, 5000)
    assert.equal(ready.u_c, bob.code)
    // The sender gets no copy from the other instance either.
    assert.isTrue(await aliceSocket.none((frame) => frame.type === 1 && frame.uuid === uuid))
    await Promise.all([aliceSocket.close(), bobSocket.close()])
  }).skip(Boolean(needs()), needs() ?? undefined)

  test("a membership change made elsewhere reaches the sending instance's member cache", async ({
    assert,
  }) => {
    const [first, second] = instances
    const alice = await member()
    const bob = await member()
    const carol = await member()
    const book = await sharedBook(alice, [bob])
    const [aliceSocket, bobSocket, carolSocket] = await Promise.all([
      attached(alice.session, second.url),
      attached(bob.session, first.url),
      attached(carol.session, first.url),
    ])
    const send = async (msg: string) => {
      const uuid = randomUUID()
      aliceSocket.send({ type: 1, uuid, smid: 0, msg, ...book })
      const ack = await aliceSocket.next((frame) => frame.type === 2 && frame.uuid === uuid)
      assert.equal(ack.status, 'ok')
      return uuid
    }
    // The second instance now knows the book's members (alice, bob) and keeps them.
    const before = await send('before carol joins')
    await bobSocket.next((frame) => frame.type === 1 && frame.uuid === before, 5000)
    // Carol joins through another process (the test server): its event is emitted there only.
    await invite(alice, book, carol, 2, true)
    const after = await send('carol is a member now')
    const pushed = await carolSocket.next((frame) => frame.type === 1 && frame.uuid === after, 5000)
    assert.equal(pushed.msg, 'carol is a member now')
    await Promise.all([aliceSocket, bobSocket, carolSocket].map((socket) => socket.close()))
  }).skip(Boolean(needs()), needs() ?? undefined)

  test('an SSE subscriber on one instance gets the messages handled by the other', async ({
    assert,
  }) => {
    const [first, second] = instances
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const transmit = new Transmit({
      baseUrl: second.url,
      maxReconnectAttempts: 1,
      eventSourceFactory: (url) => new NodeEventSource(url) as unknown as EventSource,
      beforeSubscribe: (request) => {
        request.headers.set('X-O-U', bob.session.o_u)
        request.headers.set('X-Sesskey', bob.session.sesskey)
      },
    })
    const subscription = transmit.subscription(`users/${bob.code}`)
    const received: Record<string, any>[] = []
    subscription.onMessage((payload: Record<string, any>) => received.push(payload))
    await subscription.create()
    const aliceSocket = await attached(alice.session, first.url)
    const uuid = randomUUID()
    aliceSocket.send({ type: 1, uuid, smid: 0, msg: 'to bob over SSE, elsewhere', ...book })
    const ack = await aliceSocket.ofType(2)
    assert.equal(ack.status, 'ok')
    const deadline = Date.now() + 5000
    while (
      Date.now() < deadline &&
      !(received.some((frame) => frame.uuid === uuid) && received.some((frame) => frame.type === 8))
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const message = received.find((frame) => frame.type === 1 && frame.uuid === uuid)
    assert.exists(message, JSON.stringify(received))
    assert.equal(message!.msg, 'to bob over SSE, elsewhere')
    assert.deepInclude(received, { type: 8, u_c: bob.code })
    transmit.close()
    await aliceSocket.close()
  }).skip(Boolean(needs()), needs() ?? undefined)

  test('dropAllSessions on one instance closes the dropped session socket on the other', async ({
    assert,
  }) => {
    const [first, second] = instances
    const alice = await member()
    const kept = await login(alice.user)
    const socket = await attached(alice.session, second.url)
    const response = await fetch(`${first.url}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        req: 'dropAllSessions',
        o_u: kept.o_u,
        u_c: kept.o_u,
        sesskey: kept.sesskey,
      }),
    })
    const answer = (await response.json()) as Record<string, unknown>
    assert.equal(answer.status, 'ok')
    const closed = await socket.closed
    assert.equal(closed.code, 4001)
  }).skip(Boolean(needs()), needs() ?? undefined)
})
