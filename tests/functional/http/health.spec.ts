import { test } from '@japa/runner'
import { serverUrl } from '#tests/helpers/server'
import { readiness } from '#core/http/readiness'
import quireConfig from '#config/quire'

test.group('health endpoints', () => {
  test('GET /health answers liveness as JSON', async ({ assert }) => {
    const response = await fetch(`${serverUrl()}/health`)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'application/json')
    assert.deepEqual(await response.json(), { status: 'ok' })
  })

  test('GET /health/ready reports the database and Redis it reached', async ({ assert }) => {
    const response = await fetch(`${serverUrl()}/health/ready`)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'application/json')
    assert.equal(response.headers.get('cache-control'), 'no-store')
    const body: any = await response.json()
    assert.equal(body.status, 'ok')
    assert.isTrue(body.checks.started)
    assert.isTrue(body.checks.database.ok)
    assert.isNumber(body.checks.database.ms)
    if (quireConfig.redisEnabled) assert.isTrue(body.checks.redis.ok)
    else assert.equal(body.checks.redis, 'not configured')
  })

  test('a dependency that fails or does not answer in time makes the instance unavailable', async ({
    assert,
  }) => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), {
      code: 'ECONNREFUSED',
    })
    const down = await readiness(
      { started: () => true, database: async () => 1, redis: () => Promise.reject(refused) },
      200
    )
    assert.equal(down.status, 'unavailable')
    assert.isTrue(down.checks.database.ok)
    assert.deepInclude(down.checks.redis, { ok: false, error: 'ECONNREFUSED' })

    const hung = await readiness(
      { started: () => true, database: () => new Promise(() => {}), redis: null },
      50
    )
    assert.equal(hung.status, 'unavailable')
    assert.deepInclude(hung.checks.database, { ok: false, error: 'no answer within 50 ms' })
    assert.equal(hung.checks.redis, 'not configured')
  })

  test('an instance whose ready hooks have not all run is starting, whatever its dependencies say', async ({
    assert,
  }) => {
    const early = await readiness({ started: () => false, database: async () => 1, redis: null })
    assert.equal(early.status, 'starting')
    assert.isFalse(early.checks.started)
    assert.isTrue(early.checks.database.ok)
  })
})
