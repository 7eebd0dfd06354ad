import { test } from '@japa/runner'
import WebSocket from 'ws'
import { login, makeUser } from '#tests/helpers/users'
import { serverUrl } from '#tests/helpers/server'
import { attached, connect, connectTo, ensureSocketEndpoint, socketUrl } from './socket_client.js'

test.group('socket: endpoint, attach, ping', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('attach (type 7) then ping (type 9) answers ack ping (type 10) with status ok', async ({
    assert,
  }) => {
    const session = await login(await makeUser())
    const socket = await connect(session)
    socket.send({ type: 7, version: '6.49' })
    socket.send({ type: 9, version: '6.49' })
    const pong = await socket.ofType(10)
    assert.deepEqual(pong, { type: 10, status: 'ok' })
    await socket.close()
  })

  test('attach (types 7 and 4) answers one type 8 for the attached user, first', async ({
    assert,
  }) => {
    for (const type of [7, 4]) {
      const session = await login(await makeUser())
      const socket = await connect(session)
      socket.send({ type, version: '6.49' })
      // Real clients (the PHP SDK) block on the one frame that follows their attach.
      const first = await socket.next(() => true)
      assert.deepEqual(first, { type: 8, u_c: session.o_u }, `type ${type}`)
      socket.send({ type: 9 })
      await socket.ofType(10)
      assert.isTrue(await socket.none((frame) => frame.type === 8, 200), `type ${type}`)
      assert.isTrue(socket.ws.readyState === WebSocket.OPEN)
      await socket.close()
    }
  })

  test('an attach with bad credentials gets no type 8', async ({ assert }) => {
    const session = await login(await makeUser())
    const socket = await connect({ ...session, sesskey: 'AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG' })
    socket.send({ type: 7 })
    const closed = await socket.closed
    assert.equal(closed.code, 4001)
    assert.notExists(socket.frames.find((frame) => frame.type === 8))
  })

  test('the socket answers under every environment prefix, doubled slashes tolerated', async ({
    assert,
  }) => {
    const session = await login(await makeUser())
    const base = serverUrl().replace(/^http/, 'ws')
    for (const path of ['/dev/socket', '//dev//socket/', '/live/socket/']) {
      const socket = await connectTo(`${base}${path}`, session)
      await socket.attach()
      assert.isTrue(socket.ws.readyState === WebSocket.OPEN, path)
      await socket.close()
    }
  })

  test('type given as a digit string is accepted', async ({ assert }) => {
    const session = await login(await makeUser())
    const socket = await connect(session)
    socket.send({ type: '9' })
    const pong = await socket.ofType(10)
    assert.equal(pong.status, 'ok')
    await socket.close()
  })

  test('a ping with an unknown sesskey answers nok and closes with 4001', async ({ assert }) => {
    const session = await login(await makeUser())
    const socket = await connect({ ...session, sesskey: 'AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG' })
    socket.send({ type: 9 })
    const answer = await socket.ofType(10)
    assert.equal(answer.status, 'nok')
    assert.equal(answer.errorCode, 'INVALID_SESSKEY')
    const closed = await socket.closed
    assert.equal(closed.code, 4001)
    assert.match(closed.reason, /session/i)
  })

  test('a ping whose o_u is another user answers USER_MISMATCH and keeps the connection', async ({
    assert,
  }) => {
    const session = await login(await makeUser())
    const other = await makeUser()
    const socket = await connect(session)
    socket.send({ type: 9, o_u: other.code })
    const answer = await socket.ofType(10)
    assert.equal(answer.errorCode, 'USER_MISMATCH')
    socket.send({ type: 9 })
    const pong = await socket.ofType(10)
    assert.equal(pong.status, 'ok')
    await socket.close()
  })

  test('missing sesskey or o_u answers MISSING_PARAMETER', async ({ assert }) => {
    const socket = await connect()
    socket.send({ type: 9, o_u: 'someone' })
    const missing = await socket.ofType(10)
    assert.equal(missing.errorCode, 'MISSING_PARAMETER')
    socket.send({ type: 7, sesskey: 'x' })
    const error = await socket.ofType(0)
    assert.equal(error.errorCode, 'MISSING_PARAMETER')
    assert.equal(error.reqType, 7)
    await socket.close()
  })

  test('other upgrade paths are refused, the HTTP API keeps working', async ({ assert }) => {
    const ws = new WebSocket(socketUrl().replace('/live/socket', '/live/other'))
    const outcome = await new Promise<string>((resolve) => {
      ws.once('open', () => resolve('open'))
      ws.once('unexpected-response', (_request, response) => resolve(`http ${response.statusCode}`))
      ws.once('error', (error) => resolve(`error ${error.message}`))
    })
    assert.notEqual(outcome, 'open')
    const health = await fetch(`${serverUrl()}/health`)
    assert.equal(health.status, 200)
  })

  test('the endpoint also answers with a query string and a trailing slash', async ({ assert }) => {
    const session = await login(await makeUser())
    const ws = new WebSocket(`${socketUrl()}/?client=test`)
    await new Promise((resolve, reject) => {
      ws.once('open', resolve)
      ws.once('error', reject)
    })
    ws.close()
    const socket = await attached(session)
    assert.equal(socket.ws.readyState, WebSocket.OPEN)
    await socket.close()
  })
})
