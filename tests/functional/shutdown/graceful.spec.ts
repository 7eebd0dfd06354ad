import { test } from '@japa/runner'
import { rmSync } from 'node:fs'
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { onMysql, hasRedis } from '#tests/helpers/database'
import { ace, signIn, startQuire } from '../../../bench/lib/quire_process.js'
import { apiClient } from '../../../bench/lib/api_client.js'
import { connect } from '../socket/socket_client.js'
import { childEnv } from '#tests/helpers/child_env'

/** Far below startQuire's stop(), which sends SIGKILL after 15 s. */
const EXIT_BOUND_MS = 8000
const GRACE_MS = 3000

/** `promise`, or a failure naming `what` once `ms` have passed (a hang fails, never blocks the run). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)
    }),
  ])
}

/** Opens an SSE stream (Transmit) and resolves once its first bytes arrived. */
async function openStream(url: string) {
  const response = await fetch(`${url}/__transmit/events?uid=${randomUUID()}`, {
    headers: { Accept: 'text/event-stream' },
  })
  if (!response.ok || !response.body) throw new Error(`SSE: HTTP ${response.status}`)
  const reader = response.body.getReader()
  const first = await reader.read()
  if (first.done) throw new Error('SSE stream ended at once')
  /** Resolves 'ended' when the server ends the stream properly, 'cut' when the connection drops. */
  const ending = (async () => {
    try {
      for (;;) {
        const chunk = await reader.read()
        if (chunk.done) return 'ended' as const
      }
    } catch {
      return 'cut' as const
    }
  })()
  return { ending }
}

/**
 * An api.php request whose headers and first half of the body are sent now:
 * the server is handling it. `finish()` sends the rest and answers the response.
 */
function startRequest(url: string, params: Record<string, string>) {
  const body = Buffer.from(new URLSearchParams(params).toString())
  const half = Math.floor(body.length / 2)
  const { hostname, port } = new URL(url)
  const req = httpRequest({
    host: hostname,
    port,
    method: 'POST',
    path: '/live/api.php',
    agent: false,
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'Content-Length': body.length,
    },
  })
  const response = new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
    req.on('error', reject)
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString() || '{}'),
        })
      )
    })
  })
  req.write(body.subarray(0, half))
  return {
    finish() {
      req.end(body.subarray(half))
      return response
    },
  }
}

test.group('graceful shutdown (SIGTERM)', () => {
  test('closes sockets with 1001, ends SSE streams, finishes requests in flight, exits 0', async ({
    assert,
    cleanup,
  }) => {
    const env = childEnv({ QUEUE_SHUTDOWN_TIMEOUT: String(GRACE_MS) })
    cleanup(() => rmSync(env.DATA_DIR!, { recursive: true, force: true }))
    if (!onMysql()) ace(env, 'migration:run', '--force')
    const code = `shut${Date.now().toString(36)}`
    ace(env, 'user:create', code, `${code}@example.test`, 'shutdown-password')
    const server = await startQuire(env)
    cleanup(() => server.stop())
    server.child.stdout?.resume()
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server.child.once('exit', (exitCode, signal) => resolve({ code: exitCode, signal }))
    )

    const session = await signIn(server.url, `${code}@example.test`, 'shutdown-password')
    const socket = await connect(session as any, server.url)
    await socket.attach()
    const stream = await openStream(server.url)
    const inFlight = startRequest(server.url, {
      req: 'getAllBooks',
      o_u: session.o_u,
      u_c: session.o_u,
      sesskey: session.sesskey,
    })
    // Let the server receive the request's headers before the signal.
    await new Promise((resolve) => setTimeout(resolve, 300))

    const signalledAt = Date.now()
    server.child.kill('SIGTERM')

    const closed = await within(socket.closed, EXIT_BOUND_MS, 'socket close')
    assert.equal(closed.code, 1001)
    assert.equal(await within(stream.ending, EXIT_BOUND_MS, 'SSE stream end'), 'ended')
    // The request in flight still gets its whole answer.
    const answer = await within(inFlight.finish(), EXIT_BOUND_MS, 'answer in flight')
    assert.equal(answer.status, 200)
    assert.equal(answer.body.status, 'ok', JSON.stringify(answer.body))

    const exit = await within(exited, EXIT_BOUND_MS - (Date.now() - signalledAt), 'process exit')
    assert.deepEqual(exit, { code: 0, signal: null })
    assert.isBelow(Date.now() - signalledAt, EXIT_BOUND_MS)
    // A new connection is refused once the process is gone.
    await assert.rejects(() => fetch(`${server.url}/health`))
  })
    .timeout(240_000)
    .tags([onMysql() && hasRedis() ? 'mysql-redis' : onMysql() ? 'mysql' : 'sqlite'])

  test('a server that has sent webhooks (one receiver answering, one hanging) exits 0', async ({
    assert,
    cleanup,
  }) => {
    // Receivers on loopback: one answers 200, the other never answers (the delivery times out
    // and waits for its retry while the server stops).
    let received = 0
    const held: ServerResponse[] = []
    const receivers = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        if (request.url === '/hang') return held.push(response)
        received++
        response.end('ok')
      })
    })
    await new Promise<void>((resolve) => receivers.listen(0, '127.0.0.1', resolve))
    cleanup(() => {
      for (const response of held) response.destroy()
      receivers.close()
    })
    const receiverUrl = `http://127.0.0.1:${(receivers.address() as AddressInfo).port}`
    // The embedded defaults on either suite: with the suite's database and Redis, this process's
    // own queue worker would take the child's deliveries (and could not decrypt their secrets).
    const env = childEnv(
      {
        QUEUE_SHUTDOWN_TIMEOUT: String(GRACE_MS),
        WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8',
        WEBHOOKS_TIMEOUT_MS: '500',
      },
      { embedded: true }
    )
    cleanup(() => rmSync(env.DATA_DIR!, { recursive: true, force: true }))
    ace(env, 'migration:run', '--force')
    const code = `hook${Date.now().toString(36)}`
    ace(env, 'user:create', code, `${code}@example.test`, 'shutdown-password')
    const server = await startQuire(env)
    cleanup(() => server.stop())
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server.child.once('exit', (exitCode, signal) => resolve({ code: exitCode, signal }))
    )
    const session = await signIn(server.url, `${code}@example.test`, 'shutdown-password')
    const client = apiClient(server.url, session, 4)
    cleanup(() => client.close())
    const api = client.call
    await api('createBook', { b_c: 'hooks' })
    const { catId } = await api('createTable', {
      b_o: code,
      b_c: 'hooks',
      name: 'Hooked',
      fields: [{ name: 'Qty', type: 'integer' }],
    })
    const tables = await api('getBookTables', { b_o: code, b_c: 'hooks', includeFields: 'true' })
    const fieldId = tables.bookTables.categories.find((category: any) => category.id === catId)
      .fields[0].id
    const written = await api('createOrUpdateTableRows', {
      b_o: code,
      catId,
      rows: { tmpa: { [fieldId]: 0 }, tmpb: { [fieldId]: 0 } },
    })
    for (const url of [`${receiverUrl}/ok`, `${receiverUrl}/hang`])
      await api('createWebhook', { b_o: code, catId, url, events: 'row.updated' })
    for (let value = 1; value <= 5; value++)
      for (const row of written.newRows)
        await api('updateTableValue', {
          rowId: String(row.id),
          fieldId,
          value: String(value),
          bypassUrlTrigger: 'false',
        })
    const deadline = Date.now() + 30_000
    while ((received < 10 || held.length === 0) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(received, 10)
    assert.isAbove(held.length, 0)

    const signalledAt = Date.now()
    server.child.kill('SIGTERM')
    const exit = await within(exited, EXIT_BOUND_MS, 'process exit')
    assert.deepEqual(exit, { code: 0, signal: null })
    assert.isBelow(Date.now() - signalledAt, EXIT_BOUND_MS)
  })
    .timeout(240_000)
    .tags([onMysql() && hasRedis() ? 'mysql-redis' : onMysql() ? 'mysql' : 'sqlite'])
})
