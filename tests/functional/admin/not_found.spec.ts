import { test } from '@japa/runner'
import { ConsoleClient, signedInAdmin } from './console_client.js'

test.group('console: a 404 keeps the console around it', () => {
  test('an unknown address or record, signed in: the not-found page with the navigation', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    for (const path of [
      '/admin/no-such-page',
      '/admin/users/999999999',
      '/admin/books/999999999',
    ]) {
      const answer = await client.get(path)
      assert.equal(answer.status, 404, path)
      assert.equal(answer.page?.component, 'not_found', path)
      assert.isAbove(answer.page!.props.nav.length, 3, path)
      assert.isString(answer.page!.props.me.code, path)
    }
    // A full page load (no Inertia header) gets the same page, in HTML.
    const html = await client.get('/admin/no-such-page', { inertia: false })
    assert.equal(html.status, 404)
    assert.equal(html.page?.component, 'not_found')
    // The console's files are not console pages: a missing one is a plain 404.
    const asset = await client.get('/admin/assets/no-such-file.js', { inertia: false })
    assert.equal(asset.status, 404)
    assert.isNull(asset.page)
  })

  test('signed out: the plain 404 (an address that is no page), nothing of the console', async ({
    assert,
  }) => {
    const client = new ConsoleClient()
    const answer = await client.get('/admin/no-such-page')
    assert.equal(answer.status, 404)
    const html = await client.get('/admin/no-such-page', { inertia: false })
    assert.equal(html.status, 404)
    assert.notInclude(html.text, '"nav"')
  })
})
