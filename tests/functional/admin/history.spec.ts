import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { ensureConsoleBuilt } from '#admin/build'
import { serverUrl } from '#tests/helpers/server'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { ConsoleClient, signedInAdmin } from './console_client.js'

/** The Cache-Control header of a console answer, read with a plain fetch (cookies from the client). */
async function cacheControl(client: ConsoleClient, path: string, inertia = true) {
  const answer = await client.get(path, { inertia })
  return { answer, cacheControl: answer.headers.get('cache-control') }
}

test.group('admin console: nothing of it kept by the browser after sign-out', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('every console answer is sent with Cache-Control: no-store', async ({ assert }) => {
    const visitor = new ConsoleClient()
    for (const inertia of [true, false]) {
      const login = await cacheControl(visitor, '/admin/login', inertia)
      assert.equal(login.cacheControl, 'no-store', `sign-in page, inertia ${inertia}`)
      // A redirect to the sign-in too: nothing of the console is cacheable.
      const away = await cacheControl(visitor, '/admin', inertia)
      assert.equal(away.answer.status, 303)
      assert.equal(away.cacheControl, 'no-store')
    }
    const { client } = await signedInAdmin()
    for (const path of ['/admin', '/admin/plugins', '/admin/users', '/admin/books']) {
      for (const inertia of [true, false]) {
        const { answer, cacheControl: header } = await cacheControl(client, path, inertia)
        assert.equal(answer.status, 200, path)
        assert.equal(header, 'no-store', `${path}, inertia ${inertia}`)
      }
    }
    // The built assets stay cacheable: they hold no data.
    const html = await client.get('/admin', { inertia: false })
    const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(html.text)![1]
    const asset = await fetch(`${serverUrl()}${script}`)
    await asset.arrayBuffer()
    assert.notEqual(asset.headers.get('cache-control'), 'no-store')
  })

  test('pages ask the browser to encrypt their history; the sign-in after sign-out clears it', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    for (const path of ['/admin', '/admin/plugins']) {
      for (const inertia of [true, false]) {
        const answer = await client.get(path, { inertia })
        assert.isTrue(answer.page!.encryptHistory, `${path}, inertia ${inertia}`)
        assert.isFalse(answer.page!.clearHistory, path)
      }
    }
    const out = await client.post('/admin/logout')
    assert.equal(out.location, '/admin/login')
    // Where the sign-out lands: the page that makes the browser drop the history's key.
    const landing = await client.get(out.location!)
    assert.equal(landing.page!.component, 'login')
    assert.isTrue(landing.page!.clearHistory)
    assert.notProperty(landing.page!.props, 'counts')
  })
})
