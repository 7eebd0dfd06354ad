import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import env from '#start/env'
import { StampService } from '#core/services/stamp_service'
import { SocketHub } from '#core/socket/hub'
import { hasRedis } from '#tests/helpers/database'
import {
  attached,
  connect,
  ensureSocketEndpoint,
  type TestSocket,
} from '#tests/functional/socket/socket_client'
import { SMS_ENQUEUED_SIGNAL } from '#plugins/gateways/services/android_realtime'
import { GATEWAY_ENDED_SIGNAL, GatewayFrame } from '#plugins/gateways/socket/gateway_sockets'
import gatewaysConfig from '#plugins/gateways/config'
import { uniquePhone, type Gateway } from '../helpers/gateways.js'
import { bookWithGateway, enqueue, smsOutbox, smsRows } from '../helpers/sms_outbox.js'

const [stamps, hub] = await Promise.all([
  app.container.make(StampService),
  app.container.make(SocketHub),
])

/** A socket attached with the gateway's number and sesskey; answers it and the attach's outbox frame. */
async function gatewaySocket(gateway: Gateway) {
  const socket = await connect({ o_u: gateway.phone, sesskey: gateway.sesskey })
  socket.send({ type: 7 })
  const outbox = await socket.ofType(GatewayFrame.OUTBOX)
  return { socket, outbox }
}

/** The next outbox frame carrying an SMS (an empty one is never pushed, only the attach's answer). */
const pushed = (socket: TestSocket) => socket.ofType(GatewayFrame.OUTBOX, 5000)

const stateOf = async (id: number) => {
  const row = await smsOutbox.find(id)
  return row.state
}

/** The text of the first SMS of the next outbox frame pushed. */
async function pushedText(socket: TestSocket) {
  const frame = await pushed(socket)
  return frame.sms[0].msg
}

async function closeCode(socket: TestSocket) {
  const closed = await socket.closed
  return closed.code
}

/** Publishes on the hub's channel what another instance publishes (its relay, its unregister). */
async function fromAnotherInstance(topic: string, data: unknown) {
  const { default: redis } = await import('@adonisjs/redis/services/main')
  await redis
    .connection()
    .publish(
      `${env.get('REDIS_PREFIX', 'quire:')}socket:hub`,
      JSON.stringify({ o: 'another-instance', k: 'signal', t: topic, d: data })
    )
}

test.group('gateways: outbound SMS live on the socket', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('the attach answers the due SMS; one queued later is pushed; reports on the socket', async ({
    assert,
  }) => {
    const { bookId, gateway } = await bookWithGateway()
    const early = uniquePhone()
    await enqueue({ to: early, text: 'queued before', bookId, kind: 'reminder' })

    const connectedUsers = hub.connectedUsers
    const { socket, outbox } = await gatewaySocket(gateway)
    try {
      // Indexed for no user: no user event can reach it.
      assert.equal(hub.connectedUsers, connectedUsers)
      assert.equal(outbox.ackSeconds, gatewaysConfig.smsAckTimeoutMs / 1000)
      assert.lengthOf(outbox.sms, 1)
      assert.deepInclude(outbox.sms[0], {
        to: early,
        msg: 'queued before',
        kind: 'reminder',
        attempt: 1,
      })
      assert.equal(await stateOf(outbox.sms[0].id), 'leased')

      const later = uniquePhone()
      await enqueue({ to: later, text: 'queued after', bookId })
      const frame = await pushed(socket)
      assert.lengthOf(frame.sms, 1)
      assert.deepInclude(frame.sms[0], { to: later, msg: 'queued after', kind: 'copy' })
      assert.equal(await stateOf(frame.sms[0].id), 'leased')
      // Leased to the socket: getGatewayOutbox hands it out no more.
      const polled = await gateway.call({ req: 'getGatewayOutbox' })
      assert.deepEqual(polled.sms, [])

      socket.send({ type: GatewayFrame.ACK, ids: [frame.sms[0].id], state: 'sent', uuid: 'r1' })
      const answer = await socket.ofType(GatewayFrame.ACK_ANSWER)
      assert.deepEqual(answer, {
        type: GatewayFrame.ACK_ANSWER,
        status: 'ok',
        updated: 1,
        uuid: 'r1',
      })
      assert.equal(await stateOf(frame.sms[0].id), 'sent')
      // The same report through api.php reaches the same service.
      const acked = await gateway.call({
        req: 'ackGatewayOutbox',
        ids: String(outbox.sms[0].id),
        state: 'failed',
        reason: 'no signal',
      })
      assert.equal(acked.status, 'ok', JSON.stringify(acked))
      assert.equal(await stateOf(outbox.sms[0].id), 'failed')

      const pong = await (socket.send({ type: 9 }), socket.ofType(10))
      assert.equal(pong.status, 'ok')
    } finally {
      await socket.close()
    }
  })

  test('a gateway socket may send nothing else, and bad reports write nothing', async ({
    assert,
  }) => {
    const { bookId, gateway } = await bookWithGateway()
    const other = await bookWithGateway()
    await enqueue({ bookId: other.bookId })
    const collected = await other.gateway.call({ req: 'getGatewayOutbox' })
    const foreign = collected.sms[0]
    const { socket } = await gatewaySocket(gateway)
    try {
      socket.send({ type: 1, uuid: 'u1', msg: 'hello', b_o: 'x', b_c: 'y' })
      const refused = await socket.ofType(2)
      assert.include(refused, { status: 'nok', errorCode: 'UNKNOWN_MESSAGE_TYPE', uuid: 'u1' })
      socket.send({ type: 11, msg: 'clearNotRead' })
      assert.include(await socket.ofType(12), { status: 'nok', errorCode: 'UNKNOWN_MESSAGE_TYPE' })

      socket.send({ type: GatewayFrame.ACK, ids: [foreign.id], state: 'sent', uuid: 'r2' })
      const notMine = await socket.ofType(0)
      assert.include(notMine, { status: 'nok', errorCode: 'NOT_FOUND', reqType: 41, uuid: 'r2' })
      assert.equal(await stateOf(foreign.id), 'leased')
      socket.send({ type: GatewayFrame.ACK, ids: [foreign.id], state: 'lost' })
      assert.include(await socket.ofType(0), { errorCode: 'INVALID_PARAMETER', reqType: 41 })

      // Another gateway's (or a user's) credentials on this connection are refused.
      socket.send({ type: 9, o_u: other.gateway.phone, sesskey: other.gateway.sesskey })
      assert.include(await socket.ofType(10), { status: 'nok', errorCode: 'USER_MISMATCH' })

      // Still attached: an SMS queued now is pushed.
      await enqueue({ bookId, text: 'still fed' })
      assert.equal(await pushedText(socket), 'still fed')
    } finally {
      await socket.close()
    }
  })

  test('unregisterSMSGateway closes its socket; an unknown gateway sesskey is refused', async ({
    assert,
  }) => {
    const { gateway } = await bookWithGateway()
    const { socket } = await gatewaySocket(gateway)
    const answer = await gateway.call({ req: 'unregisterSMSGateway' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.equal(await closeCode(socket), 4001)

    const again = await connect({ o_u: gateway.phone, sesskey: gateway.sesskey })
    again.send({ type: 7 })
    assert.include(await again.ofType(0), { status: 'nok', errorCode: 'INVALID_SESSKEY' })
    assert.equal(await closeCode(again), 4001)

    const { gateway: fresh } = await bookWithGateway()
    const wrong = await connect({ o_u: uniquePhone(), sesskey: fresh.sesskey })
    wrong.send({ type: 7 })
    assert.include(await wrong.ofType(0), { status: 'nok', errorCode: 'USER_MISMATCH' })
    await wrong.close()
  })

  test("a user's socket cannot turn into a gateway's, nor a gateway's into a user's", async ({
    assert,
  }) => {
    const { owner, gateway } = await bookWithGateway()
    const userSocket = await attached(owner.session)
    try {
      userSocket.send({ type: 7, o_u: gateway.phone, sesskey: gateway.sesskey })
      assert.include(await userSocket.ofType(0), { errorCode: 'USER_MISMATCH', reqType: 7 })
      // Still the user's.
      userSocket.send({ type: 9 })
      const pong = await userSocket.ofType(10)
      assert.equal(pong.status, 'ok')
    } finally {
      await userSocket.close()
    }

    const { socket } = await gatewaySocket(gateway)
    socket.send({ type: 9, o_u: owner.session.o_u, sesskey: owner.session.sesskey })
    assert.include(await socket.ofType(10), { status: 'nok', errorCode: 'INVALID_SESSKEY' })
    assert.equal(await closeCode(socket), 4001)
  })

  test('SMS queued on another instance reach the socket; its unregister there closes it', async ({
    assert,
  }) => {
    const { bookId, gateway } = await bookWithGateway()
    const { socket } = await gatewaySocket(gateway)
    try {
      // Written as another process writes it: no wake-up in this one.
      await stamps.write(({ trx }) =>
        smsOutbox.enqueue(
          trx,
          {
            to: uniquePhone(),
            text: 'from elsewhere',
            kind: 'copy',
            idempotencyKey: `elsewhere:${Date.now()}:${Math.random()}`,
            bookId,
          },
          () => {}
        )
      )
      const [row] = await smsRows({ text: 'from elsewhere' })
      await fromAnotherInstance(SMS_ENQUEUED_SIGNAL, row.gateway_id)
      assert.equal(await pushedText(socket), 'from elsewhere')

      await fromAnotherInstance(GATEWAY_ENDED_SIGNAL, Number(row.gateway_id))
      assert.equal(await closeCode(socket), 4001)
    } finally {
      await socket.close()
    }
  }).skip(!hasRedis(), 'needs Redis (REDIS_HOST): the hub channel joins instances')
})
