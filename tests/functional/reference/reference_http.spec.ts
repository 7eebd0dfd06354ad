import { test } from '@japa/runner'
import { validate as validateOpenApi } from '@scalar/openapi-parser'
import { Parser as AsyncApiParser } from '@asyncapi/parser'
import app from '@adonisjs/core/services/app'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { serverUrl } from '#tests/helpers/server'

const registry = await app.container.make(PluginRegistry)

test.group('API reference over HTTP', () => {
  test('GET /live/openapi.json answers a valid OpenAPI 3.1 document of every operation', async ({
    assert,
  }) => {
    const response = await fetch(`${serverUrl()}/live/openapi.json`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type') ?? '', /application\/json/)
    const document: any = await response.json()
    assert.equal(document.openapi, '3.1.0')
    const result = await validateOpenApi(structuredClone(document))
    assert.isTrue(result.valid, JSON.stringify(result.errors?.slice(0, 5)))
    const operations = Object.keys(document.paths).filter((path) =>
      path.startsWith('/live/api.php#')
    )
    assert.equal(operations.length, registry.operations.size)
    const sendMsg = document.paths['/live/api.php#sendMsg'].post
    assert.equal(sendMsg['x-quire-auth'], 'session_or_gateway')
    assert.equal(sendMsg['x-quire-area'], 'messages')
    assert.includeMembers(sendMsg['x-quire-errors'], ['READONLY_SESSION', 'RESTRICTED_SESSION'])
  })

  test('the example of the OpenAPI document is accepted by api.php as documented', async ({
    assert,
  }) => {
    const response = await fetch(`${serverUrl()}/live/openapi.json`)
    const document: any = await response.json()
    // createAppkey needs no session: its documented example, sent as is, answers ok.
    const example =
      document.paths['/live/api.php#createAppkey'].post.requestBody.content[
        'application/x-www-form-urlencoded'
      ].examples.call.value
    const answer = await fetch(`${serverUrl()}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(example).toString(),
    })
    const body: any = await answer.json()
    assert.equal(body.status, 'ok', JSON.stringify(body))
    assert.isString(body.appkey)
  })

  test('GET /live/asyncapi.json answers a valid AsyncAPI 3 document naming the host asked', async ({
    assert,
  }) => {
    const response = await fetch(`${serverUrl()}/live/asyncapi.json`)
    assert.equal(response.status, 200)
    const document: any = await response.json()
    assert.equal(document.asyncapi, '3.0.0')
    assert.equal(document.servers.quire.host, new URL(serverUrl()).host)
    const diagnostics = await new AsyncApiParser().validate(JSON.stringify(document))
    assert.deepEqual(
      diagnostics.filter((d) => d.severity === 0).map((d) => d.message),
      []
    )
    assert.exists(document.components.messages.type1)
    assert.exists(document.components.messages.type13)
  })

  test('GET /docs answers the reference page with the bundled assets, no CDN', async ({
    assert,
  }) => {
    const response = await fetch(`${serverUrl()}/docs`)
    const html = await response.text()
    if (response.status === 503) {
      // Not built in this checkout: the page says how, and still names the documents.
      assert.include(html, 'npm run build:console')
      return
    }
    assert.equal(response.status, 200)
    assert.match(html, /<script type="module" src="\/admin\/assets\/[^"]+\.js"><\/script>/)
    assert.notMatch(html, /https?:\/\//)
    const script = /src="(\/admin\/assets\/[^"]+)"/.exec(html)![1]
    const asset = await fetch(`${serverUrl()}${script}`)
    assert.equal(asset.status, 200)
    await asset.arrayBuffer()
  })
})
