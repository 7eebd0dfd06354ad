import { test } from '@japa/runner'
import { rmSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import testUtils from '@adonisjs/core/services/test_utils'
import { serverUrl } from '#tests/helpers/server'
import { childEnv } from '#tests/helpers/child_env'

/** Traces of a stack, a source path or a module path. */
const LEAK = /node_modules|\/work\/|[\w/.-]+\.(?:ts|js):\d+|\bat [\w.<>]+ \(|Error: .*\n\s+at /

const PATHS = [
  '/.env',
  '/admin/nothing',
  '/live/api.php/../x',
  '/live/dbi/in/abc',
  '/dev/nothing',
  '/auth/nothing',
]

test.group('errors outside api.php', () => {
  test('{$self} answers a small 404 without stack or path, for browsers and programs')
    .with(PATHS)
    .run(async ({ assert }, path) => {
      for (const accept of ['text/html,application/xhtml+xml', 'application/json', '*/*']) {
        const response = await fetch(`${serverUrl()}${path}`, { headers: { accept } })
        const text = await response.text()
        assert.equal(response.status, 404, `${path} (${accept})`)
        assert.notMatch(text, LEAK, `${path} (${accept})`)
        assert.isBelow(text.length, 2_000, `${path} (${accept})`)
      }
    })

  test('/ leads to the admin console, which sends a signed-out visitor to its sign-in', async ({
    assert,
  }) => {
    const root = await fetch(`${serverUrl()}/`, { redirect: 'manual' })
    assert.equal(root.status, 302)
    assert.equal(root.headers.get('location'), '/admin')
    const console = await fetch(`${serverUrl()}/admin`, { redirect: 'manual' })
    assert.equal(console.status, 303)
    assert.equal(console.headers.get('location'), '/admin/login')
  })

  test('a browser gets HTML, a program and the wire prefixes get JSON', async ({ assert }) => {
    const html = await fetch(`${serverUrl()}/nothing`, { headers: { accept: 'text/html' } })
    assert.match(html.headers.get('content-type')!, /^text\/html/)
    assert.include(await html.text(), 'Not found')
    for (const [path, accept] of [
      ['/nothing', 'application/json'],
      ['/live/nothing', 'text/html'],
    ]) {
      const json = await fetch(`${serverUrl()}${path}`, { headers: { accept } })
      assert.equal(json.headers.get('content-type'), 'application/json')
      assert.deepEqual(await json.json(), { error: 'not_found', message: 'Not found' })
    }
  })

  test('an unexpected error is a 500 with a reference the log also carries', async ({ assert }) => {
    const { default: Handler } = await import('#exceptions/handler')
    const handler = new Handler()
    const ctx = await testUtils.createHttpContext()
    const logged: Record<string, unknown>[] = []
    ctx.logger = { error: (data: Record<string, unknown>) => logged.push(data) } as any
    const error = new Error('boom at /work/main/app/x.ts:12')
    await handler.report(error, ctx)
    await handler.handle(error, ctx)
    const body = JSON.parse(ctx.response.getBody() as string)
    assert.equal(ctx.response.getStatus(), 500)
    assert.equal(body.error, 'internal_error')
    assert.match(body.reference, /^[0-9a-f]{8}$/)
    assert.notMatch(ctx.response.getBody() as string, LEAK)
    assert.equal(logged[0].reference, body.reference)
    assert.equal(logged[0].err, error)
    assert.isTrue(app.inTest)
  })
})

test.group('errors outside api.php, as `npm start` serves them (development mode)', () => {
  test('a development server answers unknown paths without a debug page', async ({
    assert,
    cleanup,
  }) => {
    const { startQuire } = await import('../../../bench/lib/quire_process.js')
    // Error pages do not depend on the database: the child runs on the embedded defaults, so it
    // never shares (or migrates) the database of the suite that started it.
    const env = childEnv({}, { embedded: true })
    cleanup(() => rmSync(env.DATA_DIR!, { recursive: true, force: true }))
    const server = await startQuire(env)
    cleanup(() => server.stop())
    for (const path of ['/.env', '/admin/nothing', '/live/dbi/in/x']) {
      for (const accept of ['text/html', 'application/json']) {
        const response = await fetch(`${server.url}${path}`, { headers: { accept } })
        const text = await response.text()
        assert.equal(response.status, 404, `${path} (${accept})`)
        assert.notMatch(text, LEAK, `${path} (${accept})`)
        assert.isBelow(text.length, 2_000, `${path} (${accept})`)
      }
    }
  }).timeout(180_000)
})
