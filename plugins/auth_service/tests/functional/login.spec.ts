import { test } from '@japa/runner'
import {
  post,
  call,
  authUser,
  signIn,
  decodeJwt,
  resetAuthState,
  TEST_PASSWORD,
  authConfig,
  credentials,
} from '../helpers.js'
import { passwordPolicy } from '#core/services/password_policy'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

test.group('auth_service: password login', (group) => {
  group.each.setup(() => resetAuthState())

  test('login by e-mail completes with the full 4.B.2 success body', async ({ assert }) => {
    const user = await authUser()
    const answer = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.equal(answer.status, 200, answer.text)
    const body = answer.body
    assert.isTrue(body.success)
    assert.match(body.jwt, /^[\w-]+\.[\w-]+\.[\w-]+$/)
    assert.match(body.refresh_token, /^rt_[\w-]{43}$/)
    assert.match(body.user.id, UUID)
    assert.equal(body.user.email, user.email)
    assert.equal(body.user.code, user.code)
    assert.deepEqual(body.passThroughParameters, {})
    assert.isFalse(body.mustChangePassword)
    assert.notProperty(body, 'passwordResetToken')
    assert.isObject(body.authenticationPolicies)
    assert.equal(body.authenticationPolicies.password.minLength, passwordPolicy.rules.minLength)
    assert.isFalse(body.twoFactorSetupRequired)
    assert.notProperty(body, 'redirect')
    assert.notProperty(body, 'form_post')
    assert.equal(answer.headers.get('cache-control'), 'no-store')

    const { header, payload } = decodeJwt(body.jwt)
    assert.equal(header.alg, 'HS256')
    assert.equal(header.kid, authConfig.jwtKeys[0].kid)
    assert.equal(payload.sub, body.user.id)
    assert.equal(payload.exp - payload.iat, authConfig.ttl.accessSeconds)
  })

  test('login by user code gives the same user uuid', async ({ assert }) => {
    const user = await authUser()
    const byEmail = await signIn(user)
    const byCode = await post('/login', { login: user.code, password: TEST_PASSWORD })
    assert.equal(byCode.status, 200, byCode.text)
    assert.equal(byCode.body.user.id, byEmail.user.id)
  })

  test('email and username are accepted as aliases of login, and urlencoded bodies too', async ({
    assert,
  }) => {
    const user = await authUser()
    const byAlias = await post('/login', { email: user.email, password: TEST_PASSWORD })
    assert.equal(byAlias.status, 200, byAlias.text)
    const form = await call('POST', '/login', {
      form: { username: user.code, password: TEST_PASSWORD },
    })
    assert.equal(form.status, 200, form.text)
  })

  test('a wrong password or an unknown login answers invalid_credentials (401)', async ({
    assert,
  }) => {
    const user = await authUser()
    for (const attempt of [
      { login: user.email, password: 'wrong password' },
      { login: 'nobody@example.test', password: TEST_PASSWORD },
    ]) {
      const answer = await post('/login', attempt)
      assert.equal(answer.status, 401)
      assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'message', 'success'])
      assert.isFalse(answer.body.success)
      assert.equal(answer.body.error, 'invalid_credentials')
    }
  })

  test('a body without login and password is a validation_error naming both fields', async ({
    assert,
  }) => {
    const answer = await post('/login', {})
    assert.equal(answer.status, 422)
    assert.isFalse(answer.body.success)
    assert.equal(answer.body.error, 'validation_error')
    assert.isString(answer.body.message)
    assert.isArray(answer.body.errors.login)
    assert.isString(answer.body.errors.login[0])
    assert.isArray(answer.body.errors.password)
  })

  test('malformed JSON answers invalid_json, never a 500 or an HTML page', async ({ assert }) => {
    const answer = await call('POST', '/login', { raw: '{"login": ' })
    assert.equal(answer.status, 400)
    assert.equal(answer.body.error, 'invalid_json')
    assert.include(answer.headers.get('content-type') ?? '', 'application/json')
  })

  test('an unknown path under {auth_url} is a JSON 404', async ({ assert }) => {
    const answer = await call('GET', '/no/such/thing')
    assert.equal(answer.status, 404)
    assert.equal(answer.body.error, 'not_found')
  })

  test('repeated failures on one login are throttled with too_many_requests and retry_after', async ({
    assert,
  }) => {
    const user = await authUser()
    let last = await post('/login', { login: user.email, password: 'nope' })
    for (let attempt = 1; attempt < authConfig.login.maxAttempts; attempt++) {
      last = await post('/login', { login: user.email, password: 'nope' })
      assert.equal(last.status, 401)
    }
    // Over the limit even the right password is refused until the window has passed.
    const blocked = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.equal(blocked.status, 429, blocked.text)
    assert.equal(blocked.body.error, 'too_many_requests')
    assert.isTrue(Number.isInteger(blocked.body.retry_after) && blocked.body.retry_after > 0)
    assert.equal(blocked.headers.get('retry-after'), String(blocked.body.retry_after))
    await credentials.reset({ login: user.email! })
  })
})
