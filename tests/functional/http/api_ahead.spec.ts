import { test } from '@japa/runner'
import emitter from '@adonisjs/core/services/emitter'
import { useApiAhead } from '#core/http/node_server'
import { serverUrl } from '#tests/helpers/server'
import { login, makeUser } from '#tests/helpers/users'

/**
 * api.php ahead of the router (node_server.ts serveApiAhead, issue 23 item 6): every request
 * below is sent through the path ahead of the router and through the router's route, and both
 * answers must be the same: status, every header but Date, and the body (values that change
 * from one call to the next, such as stamps, are compared by type only).
 */

interface Exchange {
  status: number
  headers: [string, string][]
  body: string
}

/** Values a second call answers differently whatever the path. */
const VOLATILE = new Set(['sstamp', 'lastConnection', 'secondsSincePreviousConnection', 'appkey'])

function comparable(text: string): unknown {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text
  }
  return JSON.parse(JSON.stringify(parsed), (key, value) =>
    VOLATILE.has(key) ? `<${typeof value}>` : value
  )
}

async function exchange(path: string, init: RequestInit): Promise<Exchange> {
  const response = await fetch(`${serverUrl()}${path}`, init)
  const body = await response.text()
  const headers = [...response.headers].filter(([name]) => name !== 'date')
  return { status: response.status, headers, body }
}

/** How many requests AdonisJS's own handler completed (it emits this event once per request). */
let throughRouter = 0
const countRouter = () => throughRouter++

/** The same request ahead of the router and through it: both exchanges, and which one it took. */
async function bothWays(path: string, init: () => RequestInit) {
  const before = throughRouter
  const ahead = await exchange(path, init())
  const aheadUsedRouter = throughRouter !== before
  useApiAhead(false)
  try {
    const routed = await exchange(path, init())
    return { ahead, routed, aheadUsedRouter, routedUsedRouter: throughRouter !== before }
  } finally {
    useApiAhead(true)
  }
}

test.group('api.php ahead of the router', (group) => {
  group.setup(() => {
    emitter.on('http:request_completed', countRouter)
    return () => emitter.off('http:request_completed', countRouter)
  })

  test('{self}: same status, headers and body on both paths')
    .with(async () => {
      const user = await makeUser()
      const session = await login(user)
      const credentials = { o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey }
      const form = (params: Record<string, string>) => new URLSearchParams(params).toString()
      const urlencoded = { 'Content-Type': 'application/x-www-form-urlencoded' }
      const json = { 'Content-Type': 'application/json' }
      const query = form({ req: 'getUserInfo', version: '6.49q/6.49', ...credentials })
      const image = () => {
        const data = new FormData()
        for (const [name, value] of Object.entries(credentials)) data.append(name, value)
        data.append('req', 'setProfileImage')
        data.append('qqfile', new Blob(['not an image']), 'face.png')
        return data
      }
      return [
        { self: 'GET without parameters', path: '/live/api.php', init: () => ({}) },
        { self: 'GET, unknown operation', path: '/live/api.php?req=noSuchThing', init: () => ({}) },
        { self: 'GET getUserInfo', path: `/live/api.php?${query}`, init: () => ({}) },
        {
          self: 'POST getUserInfo, parameters in the query string',
          path: `/live/api.php?${query}`,
          init: () => ({ method: 'POST' }),
        },
        {
          self: 'POST urlencoded getUserInfo',
          path: '/live/api.php',
          init: () => ({ method: 'POST', headers: urlencoded, body: query }),
        },
        {
          self: 'POST JSON getUserInfo',
          path: '/live/api.php',
          init: () => ({
            method: 'POST',
            headers: json,
            body: JSON.stringify({ req: 'getUserInfo', ...credentials }),
          }),
        },
        {
          self: 'POST malformed JSON',
          path: '/live/api.php',
          init: () => ({ method: 'POST', headers: json, body: '{"req":' }),
        },
        {
          self: 'POST multipart getUserInfo',
          path: '/live/api.php',
          init: () => {
            const data = new FormData()
            data.append('req', 'getUserInfo')
            for (const [name, value] of Object.entries(credentials)) data.append(name, value)
            return { method: 'POST', body: data }
          },
        },
        {
          self: 'POST multipart with a file that is not an image',
          path: '/live/api.php',
          init: () => ({ method: 'POST', body: image() }),
        },
        {
          self: 'POST urlencoded with a wrong sesskey',
          path: '/live/api.php',
          init: () => ({
            method: 'POST',
            headers: urlencoded,
            body: form({ req: 'getAllBooks', ...credentials, sesskey: 'nope' }),
          }),
        },
        {
          self: 'doubled slashes, /dev prefix',
          path: `//dev//api.php?${query}`,
          init: () => ({}),
        },
        { self: 'trailing slash', path: `/live/api.php/?${query}`, init: () => ({}) },
        { self: 'HEAD', path: `/live/api.php?${query}`, init: () => ({ method: 'HEAD' }) },
        {
          self: 'OPTIONS (a CORS preflight)',
          path: '/live/api.php',
          init: () => ({
            method: 'OPTIONS',
            headers: {
              'Origin': 'https://client.example',
              'Access-Control-Request-Method': 'POST',
            },
          }),
        },
        { self: 'DELETE', path: `/live/api.php?${query}`, init: () => ({ method: 'DELETE' }) },
        {
          self: 'X-Request-Id echoed',
          path: `/live/api.php?${query}`,
          init: () => ({ headers: { 'X-Request-Id': 'trace-1234' } }),
        },
        {
          self: 'X-Forwarded-For from an untrusted peer',
          path: `/live/api.php?${query}`,
          init: () => ({ headers: { 'X-Forwarded-For': '203.0.113.9, 198.51.100.1' } }),
        },
      ]
    })
    .run(async ({ assert }, { path, init }) => {
      const { ahead, routed, aheadUsedRouter, routedUsedRouter } = await bothWays(path, init)
      assert.isFalse(aheadUsedRouter, 'the path ahead of the router did not serve it')
      assert.isTrue(routedUsedRouter, 'with the path ahead turned off, the router served it')
      assert.equal(ahead.status, 200)
      assert.equal(routed.status, 200)
      assert.deepEqual(ahead.headers, routed.headers)
      assert.deepInclude(ahead.headers, ['content-type', 'application/json'])
      assert.deepEqual(comparable(ahead.body), comparable(routed.body))
    })

  test('another method or path still reaches the router', async ({ assert }) => {
    const before = throughRouter
    const other = await exchange('/live/api.php', { method: 'PROPFIND' })
    const elsewhere = await exchange('/live/api.phpx', {})
    assert.equal(throughRouter - before, 2)
    assert.equal(other.status, 404)
    assert.equal(elsewhere.status, 404)
  })
})
