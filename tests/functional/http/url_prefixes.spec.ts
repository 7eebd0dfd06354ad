import { test } from '@japa/runner'
import { rpc } from '#tests/helpers/rpc'
import { serverUrl } from '#tests/helpers/server'

test.group('api.php under the environment prefixes', () => {
  test('{$self} serves api.php')
    .with(['/live/api.php', '/dev/api.php', '/dev/api.php/', '/dev//api.php', '//live/api.php'])
    .run(async ({ assert }, path) => {
      const answer = await rpc(
        { req: 'createAppkey', appname: `prefix ${path}` },
        'urlencoded',
        path
      )
      assert.equal(answer.status, 200)
      assert.equal(answer.contentType, 'application/json')
      assert.equal(answer.body.status, 'ok', answer.text)
      assert.equal(answer.body.req, 'createAppkey')
    })

  test('the PHP SDK URL shape: `$url . "/dev/" . "/api.php?req=..."` with a GET', async ({
    assert,
  }) => {
    const response = await fetch(`${serverUrl()}/dev//api.php?req=createAppkey&appname=sdk`)
    assert.equal(response.status, 200)
    const body = (await response.json()) as Record<string, unknown>
    assert.equal(body.status, 'ok')
    assert.equal(body.req, 'createAppkey')
  })

  test('a prefix that is not configured is not served', async ({ assert }) => {
    const response = await fetch(`${serverUrl()}/prod/api.php?req=createAppkey&appname=x`)
    assert.equal(response.status, 404)
    await response.arrayBuffer()
  })
})
