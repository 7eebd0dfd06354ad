import app from '@adonisjs/core/services/app'
import { test } from '@japa/runner'
import WebSocket from 'ws'
import db from '@adonisjs/lucid/services/db'
import socketConfig from '#config/socket'
import { AccessService } from '#core/services/access_service'
import { dbTimestamp } from '#core/db_time'
import { rpc } from '#tests/helpers/rpc'
import { login, makeUser } from '#tests/helpers/users'
import { attached, connect, ensureSocketEndpoint, socketUrl } from './socket_client.js'

const access = await app.container.make(AccessService)

/** Runs `work` with some socket limits changed (the server reads the same config object). */
async function withLimits<T>(limits: Partial<typeof socketConfig>, work: () => Promise<T>) {
  const saved = { ...socketConfig }
  Object.assign(socketConfig, limits)
  try {
    return await work()
  } finally {
    Object.assign(socketConfig, saved)
  }
}

async function stillWorks(socket: Awaited<ReturnType<typeof attached>>) {
  socket.send({ type: 9 })
  const pong = await socket.ofType(10)
  return pong.status === 'ok'
}

test.group('socket: bad frames', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('malformed frames get an error frame (type 0, MALFORMED_FRAME) and the connection stays', async ({
    assert,
  }) => {
    const socket = await attached(await login(await makeUser()))
    const bad = [
      '{not json',
      '[1,2]',
      '"text"',
      'null',
      '{"type":"ping"}',
      '{"type":1.5}',
      '{"no":"type"}',
      '',
    ]
    for (const raw of bad) {
      socket.send(raw)
      const error = await socket.ofType(0)
      assert.equal(error.status, 'nok')
      assert.equal(error.errorCode, 'MALFORMED_FRAME', raw)
      assert.isString(error.errorMsg)
    }
    socket.ws.send(Buffer.from([1, 2, 3]), { binary: true })
    const binary = await socket.ofType(0)
    assert.equal(binary.errorCode, 'MALFORMED_FRAME')
    assert.isTrue(await stillWorks(socket))
    await socket.close()
  })

  test('an unknown type gets UNKNOWN_MESSAGE_TYPE naming it', async ({ assert }) => {
    const socket = await attached(await login(await makeUser()))
    socket.send({ type: 42 })
    const error = await socket.ofType(0)
    assert.equal(error.errorCode, 'UNKNOWN_MESSAGE_TYPE')
    assert.equal(error.reqType, 42)
    // Server -> client types sent by a client are unknown as requests too.
    socket.send({ type: 2 })
    const serverType = await socket.ofType(0)
    assert.equal(serverType.errorCode, 'UNKNOWN_MESSAGE_TYPE')
    assert.isTrue(await stillWorks(socket))
    await socket.close()
  })

  test('too many bad frames close the connection with 4009; others are unaffected', async ({
    assert,
  }) => {
    await withLimits({ maxBadFrames: 5 }, async () => {
      const bystander = await attached(await login(await makeUser()))
      const socket = await attached(await login(await makeUser()))
      for (let index = 0; index < 10; index++) socket.send('garbage')
      const closed = await socket.closed
      assert.equal(closed.code, 4009)
      assert.match(closed.reason, /malformed/i)
      assert.isTrue(await stillWorks(bystander))
      await bystander.close()
    })
  })

  test('an oversized frame closes with 1009 (message too big); others are unaffected', async ({
    assert,
  }) => {
    const bystander = await attached(await login(await makeUser()))
    const socket = await attached(await login(await makeUser()))
    socket.send({ type: 1, msg: 'x'.repeat(socketConfig.maxFrameBytes + 1) })
    const closed = await socket.closed
    assert.equal(closed.code, 1009)
    assert.isTrue(await stillWorks(bystander))
    await bystander.close()
  })

  test('a flood gets RATE_LIMITED, then a close with 4008; others are unaffected', async ({
    assert,
  }) => {
    await withLimits({ frameBurst: 10, framesPerSecond: 5, maxBadFrames: 20 }, async () => {
      const bystander = await attached(await login(await makeUser()))
      const socket = await attached(await login(await makeUser()))
      for (let index = 0; index < 200; index++) socket.send({ type: 9 })
      const closed = await socket.closed
      assert.equal(closed.code, 4008)
      assert.match(closed.reason, /flood/i)
      const limited = socket.frames.filter((frame) => frame.errorCode === 'RATE_LIMITED')
      assert.isAtLeast(limited.length, 1)
      // Refusals are not amplified: at most one per second.
      assert.isAtMost(limited.length, 2)
      const answered = socket.frames.filter((frame) => frame.type === 10 && frame.status === 'ok')
      assert.isAtMost(answered.length, 12)
      assert.isTrue(await stillWorks(bystander))
      await bystander.close()
    })
  })

  test('a connection that never sends credentials is closed with 4003', async ({ assert }) => {
    await withLimits({ attachTimeoutMs: 200 }, async () => {
      const socket = await connect()
      const closed = await socket.closed
      assert.equal(closed.code, 4003)
    })
  })
})

test.group('socket: sessions and heartbeat', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('dropAllSessions closes the sockets of the dropped sessions with 4001, the kept one stays', async ({
    assert,
  }) => {
    const user = await makeUser()
    const dropped = await login(user)
    const kept = await login(user)
    const [droppedSocket, keptSocket] = await Promise.all([attached(dropped), attached(kept)])
    const answer = await rpc({
      req: 'dropAllSessions',
      o_u: kept.o_u,
      u_c: kept.o_u,
      sesskey: kept.sesskey,
    })
    assert.equal(answer.body.status, 'ok')
    const closed = await droppedSocket.closed
    assert.equal(closed.code, 4001)
    assert.match(closed.reason, /dropAllSessions/)
    assert.isTrue(await stillWorks(keptSocket))
    await keptSocket.close()
  })

  test('revoking every session of a user (revoke-others of the auth service) closes all their sockets', async ({
    assert,
  }) => {
    const user = await makeUser()
    const sockets = await Promise.all([attached(await login(user)), attached(await login(user))])
    const bystander = await attached(await login(await makeUser()))
    await access.revokeAllSessionsOf(user.id, 'revoke-others')
    for (const socket of sockets) {
      const closed = await socket.closed
      assert.equal(closed.code, 4001)
      assert.match(closed.reason, /revoke-others/)
    }
    assert.isTrue(await stillWorks(bystander))
    await bystander.close()
  })

  test('every frame is checked: a session revoked behind the service is refused at the next check', async ({
    assert,
  }) => {
    await withLimits({ authRecheckMs: 0 }, async () => {
      const user = await makeUser()
      const session = await login(user)
      const socket = await attached(session)
      await db
        .from('api_sessions')
        .where('user_id', user.id)
        .update({ revoked_at: dbTimestamp(), revoked_reason: 'test' })
      socket.send({ type: 9 })
      const answer = await socket.ofType(10)
      assert.equal(answer.errorCode, 'INVALID_SESSKEY')
      const closed = await socket.closed
      assert.equal(closed.code, 4001)
    })
  })

  test('an expired session is closed with 4002', async ({ assert }) => {
    await withLimits({ authRecheckMs: 0 }, async () => {
      const user = await makeUser()
      const socket = await attached(await login(user))
      await db
        .from('api_sessions')
        .where('user_id', user.id)
        .update({ expires_at: dbTimestamp(new Date(Date.now() - 60_000) as any) })
      socket.send({ type: 9 })
      const answer = await socket.ofType(10)
      assert.equal(answer.errorCode, 'SESSION_EXPIRED')
      const closed = await socket.closed
      assert.equal(closed.code, 4002)
    })
  })

  test('heartbeat: a client that stops answering pings is reaped, a live one stays', async ({
    assert,
  }) => {
    const server = await ensureSocketEndpoint()
    const live = await attached(await login(await makeUser()))
    const dead = new WebSocket(socketUrl(), { autoPong: false })
    await new Promise((resolve) => dead.once('open', resolve))
    const deadClosed = new Promise<number>((resolve) => dead.once('close', (code) => resolve(code)))
    server.beat()
    await new Promise((resolve) => setTimeout(resolve, 100))
    server.beat()
    assert.equal(await deadClosed, 1006)
    assert.isTrue(await stillWorks(live))
    await live.close()
  })
})
