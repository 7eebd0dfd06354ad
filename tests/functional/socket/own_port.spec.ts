import { test } from '@japa/runner'
import { onMysql } from '#tests/helpers/database'
import { ace, freePort, signIn, startQuire } from '../../../bench/lib/quire_process.js'
import { attached, connectTo } from './socket_client.js'
import { childEnv } from '#tests/helpers/child_env'

/**
 * SOCKET_PORT: the socket on a port of its own, on the root path, as the
 * official PHP SDK connects (`wss://<host>:10100/`, behind a TLS front).
 */
test.group('socket: a port of its own (SOCKET_PORT)', () => {
  test('serves the socket on every path of its port; plain HTTP there gets 426', async ({
    assert,
    cleanup,
  }) => {
    const socketPort = await freePort()
    const env = childEnv({ NODE_ENV: 'production', SOCKET_PORT: String(socketPort) })
    if (!onMysql()) ace(env, 'migration:run', '--force')
    const code = `sp${Date.now().toString(36)}`
    ace(env, 'user:create', code, `${code}@example.test`, 'socket-port-password')
    const server = await startQuire(env)
    cleanup(() => server.stop())
    const session = await signIn(server.url, `${code}@example.test`, 'socket-port-password')

    for (const path of ['/', '', '/anything']) {
      const socket = await connectTo(`ws://127.0.0.1:${socketPort}${path}`, session)
      socket.send({ type: 4, version: '6.49' })
      assert.deepEqual(await socket.next(() => true), { type: 8, u_c: session.o_u }, path)
      socket.send({ type: 9 })
      const pong = await socket.ofType(10)
      assert.equal(pong.status, 'ok')
      await socket.close()
    }
    const plain = await fetch(`http://127.0.0.1:${socketPort}/`)
    assert.equal(plain.status, 426)
    // The HTTP server keeps its own socket path.
    const main = await attached(session, server.url)
    await main.close()
  }).timeout(180_000)
})
