import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import {
  authUser,
  call,
  codeFor,
  deleteUser,
  enrol,
  nextStep,
  post,
  resetAuthState,
  TEST_PASSWORD,
  authConfig,
  clock,
  totp,
  authUsers,
} from '../helpers.js'

const FAILURE_KEYS = ['error', 'message', 'success']

/** Starts an enforced-TOTP login: the setup answer. */
async function startSetup(user: { email: string | null }, extra: Record<string, unknown> = {}) {
  const answer = await post('/login', { login: user.email, password: TEST_PASSWORD, ...extra })
  if (!answer.body.setup_token) throw new Error(`expected a setup: ${answer.text}`)
  return answer.body as {
    setup_token: string
    twoFactorData: { secret: string; qr_uri: string }
  } & Record<string, any>
}

test.group('auth_service: enforced TOTP setup (4.B.2)', (group) => {
  group.each.setup(() => resetAuthState())

  test('an enforced, not enrolled user gets twoFactorSetupRequired, a setup_token and twoFactorData', async ({
    assert,
  }) => {
    const user = await authUser({ totp: 'required' })
    const answer = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.equal(answer.status, 200, answer.text)
    assert.isTrue(answer.body.twoFactorSetupRequired)
    assert.isString(answer.body.setup_token)
    assert.equal(answer.body.expires_in, authConfig.ttl.setupSeconds)
    assert.match(answer.body.twoFactorData.secret, /^[A-Z2-7]{16,}$/)
    assert.match(answer.body.twoFactorData.qr_uri, /^otpauth:\/\/totp\//)
    assert.include(answer.body.twoFactorData.qr_uri, `secret=${answer.body.twoFactorData.secret}`)
    assert.notProperty(answer.body, 'jwt')
    assert.notProperty(answer.body, 'refresh_token')
  })

  test('confirm with a valid code completes the login with the full success body', async ({
    assert,
  }) => {
    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    const answer = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: await codeFor(setup.twoFactorData.secret),
    })
    assert.equal(answer.status, 200, answer.text)
    const body = answer.body
    assert.isTrue(body.success)
    assert.isString(body.jwt)
    assert.isString(body.refresh_token)
    assert.equal(body.user.email, user.email)
    assert.match(body.user.id, /^[0-9a-f-]{36}$/)
    assert.deepEqual(body.passThroughParameters, {})
    assert.isFalse(body.mustChangePassword)
    assert.isObject(body.authenticationPolicies)
    assert.isFalse(body.twoFactorSetupRequired)
    const me = await call('GET', '/api/me', { token: body.jwt })
    assert.equal(me.status, 200, 'the new access token is accepted')
    assert.equal(me.body.user.id, body.user.id)
  })

  test('the secret is stored encrypted, not in clear', async ({ assert }) => {
    const user = await authUser()
    const { secret } = await enrol(user)
    const row = await db.from('auth_users').where('user_id', user.id).first()
    assert.notInclude(row.totp_secret, secret)
    assert.match(row.totp_secret, /^v1\./)
    assert.equal(totp.open(row.totp_secret), secret)
  })

  test('a wrong code answers invalid_code and leaves the setup pending', async ({ assert }) => {
    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    const good = await codeFor(setup.twoFactorData.secret)
    const wrong = good === '000000' ? '111111' : '000000'
    const refused = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: wrong,
    })
    assert.equal(refused.status, 401)
    assert.deepEqual(Object.keys(refused.body).sort(), FAILURE_KEYS)
    assert.equal(refused.body.error, 'invalid_code')
    const accepted = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: good,
    })
    assert.equal(accepted.status, 200, accepted.text)
  })

  test('a code from another time window is refused', async ({ assert }) => {
    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    const stale = await codeFor(setup.twoFactorData.secret, -120)
    const answer = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: stale,
    })
    assert.equal(answer.status, 401)
    assert.equal(answer.body.error, 'invalid_code')
  })

  test('too many wrong codes burn the setup token', async ({ assert }) => {
    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    const good = await codeFor(setup.twoFactorData.secret)
    const wrong = good === '000000' ? '111111' : '000000'
    for (let attempt = 0; attempt < authConfig.totp.maxAttempts; attempt++) {
      await post('/login/2fa/setup/confirm', { setup_token: setup.setup_token, code: wrong })
    }
    const answer = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: good,
    })
    assert.equal(answer.status, 400)
    assert.equal(answer.body.error, 'invalid_setup_token')
  })

  test('an expired setup token answers setup_token_expired', async ({ assert }) => {
    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    clock.advance((authConfig.ttl.setupSeconds + 1) * 1000)
    const answer = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: await codeFor(setup.twoFactorData.secret),
    })
    assert.equal(answer.status, 400)
    assert.deepEqual(Object.keys(answer.body).sort(), FAILURE_KEYS)
    assert.equal(answer.body.error, 'setup_token_expired')
  })

  test('an unknown or already used setup token answers invalid_setup_token', async ({ assert }) => {
    const unknown = await post('/login/2fa/setup/confirm', {
      setup_token: 'st_nothing',
      code: '123456',
    })
    assert.equal(unknown.status, 400)
    assert.equal(unknown.body.error, 'invalid_setup_token')

    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    const code = await codeFor(setup.twoFactorData.secret)
    assert.equal(
      await post('/login/2fa/setup/confirm', { setup_token: setup.setup_token, code }).then(
        (answer) => answer.status
      ),
      200
    )
    nextStep()
    const again = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: await codeFor(setup.twoFactorData.secret),
    })
    assert.equal(again.status, 400)
    assert.equal(again.body.error, 'invalid_setup_token')
  })

  test('a setup token whose user was deleted mid-setup answers user_not_found', async ({
    assert,
  }) => {
    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    await deleteUser(user.id)
    const answer = await post('/login/2fa/setup/confirm', {
      setup_token: setup.setup_token,
      code: await codeFor(setup.twoFactorData.secret),
    })
    assert.equal(answer.status, 410)
    assert.deepEqual(Object.keys(answer.body).sort(), FAILURE_KEYS)
    assert.equal(answer.body.error, 'user_not_found')
  })

  test('an invalid body is a validation_error with errors per field', async ({ assert }) => {
    const missing = await post('/login/2fa/setup/confirm', {})
    assert.equal(missing.status, 422)
    assert.deepEqual(Object.keys(missing.body).sort(), ['error', 'errors', 'message', 'success'])
    assert.equal(missing.body.error, 'validation_error')
    assert.isFalse(missing.body.success)
    assert.isArray(missing.body.errors.setup_token)
    assert.isArray(missing.body.errors.code)
    for (const code of ['12345', '1234567', '12a456', ' ']) {
      const bad = await post('/login/2fa/setup/confirm', { setup_token: 'st_x', code })
      assert.equal(bad.status, 422, code)
      assert.deepEqual(bad.body.errors.code, ['The code must be exactly 6 digits'])
      assert.notProperty(bad.body.errors, 'setup_token')
    }
  })
})

test.group('auth_service: enrolled users give a TOTP code', (group) => {
  group.each.setup(() => resetAuthState())

  test('without a code the login answers twoFactorRequired and a login_token for /login/2fa', async ({
    assert,
  }) => {
    const user = await authUser()
    const { secret } = await enrol(user)
    nextStep()
    const first = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.equal(first.status, 200)
    assert.isTrue(first.body.twoFactorRequired)
    assert.notProperty(first.body, 'jwt')
    const done = await post('/login/2fa', {
      login_token: first.body.login_token,
      code: await codeFor(secret),
    })
    assert.equal(done.status, 200, done.text)
    assert.isString(done.body.jwt)
  })

  test('a code is accepted once: the code used at setup is refused right after', async ({
    assert,
  }) => {
    const user = await authUser({ totp: 'required' })
    const setup = await startSetup(user)
    const code = await codeFor(setup.twoFactorData.secret)
    assert.equal(
      await post('/login/2fa/setup/confirm', { setup_token: setup.setup_token, code }).then(
        (answer) => answer.status
      ),
      200
    )
    const replay = await post('/login', { login: user.email, password: TEST_PASSWORD, code })
    assert.equal(replay.status, 401)
    assert.equal(replay.body.error, 'invalid_code')
    nextStep()
    const fresh = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      code: await codeFor(setup.twoFactorData.secret),
    })
    assert.equal(fresh.status, 200, fresh.text)
  })

  test('two concurrent logins with the same code: exactly one succeeds', async ({ assert }) => {
    const user = await authUser()
    const { secret } = await enrol(user)
    nextStep()
    const code = await codeFor(secret)
    const answers = await Promise.all(
      [1, 2, 3].map(() => post('/login', { login: user.email, password: TEST_PASSWORD, code }))
    )
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 401, 401])
  })

  test('a login_token refuses a replayed code and a wrong one', async ({ assert }) => {
    const user = await authUser()
    const { secret } = await enrol(user)
    nextStep()
    const code = await codeFor(secret)
    assert.equal(
      await post('/login', { login: user.email, password: TEST_PASSWORD, code }).then(
        (answer) => answer.status
      ),
      200
    )
    const pending = await post('/login', { login: user.email, password: TEST_PASSWORD })
    const replay = await post('/login/2fa', { login_token: pending.body.login_token, code })
    assert.equal(replay.status, 401)
    assert.equal(replay.body.error, 'invalid_code')
    const invalid = await post('/login/2fa', { login_token: 'st_unknown', code })
    assert.equal(invalid.body.error, 'invalid_setup_token')
  })

  test('wrong codes are counted per user: new login tokens buy no new guesses', async ({
    assert,
  }) => {
    const user = await authUser()
    const { secret } = await enrol(user)
    nextStep()
    const good = await codeFor(secret)
    const wrong = good === '000000' ? '111111' : '000000'
    for (let attempt = 0; attempt < authConfig.login.maxAttempts; attempt++) {
      const pending = await post('/login', { login: user.code, password: TEST_PASSWORD })
      const refused = await post('/login/2fa', {
        login_token: pending.body.login_token,
        code: wrong,
      })
      assert.equal(refused.body.error, 'invalid_code')
    }
    const pending = await post('/login', { login: user.code, password: TEST_PASSWORD })
    const blocked = await post('/login/2fa', { login_token: pending.body.login_token, code: good })
    assert.equal(blocked.status, 429, blocked.text)
    assert.equal(blocked.body.error, 'too_many_requests')
    assert.isAbove(blocked.body.retry_after, 0)
  })

  test('an optional policy does not ask for a setup; resetting the second factor asks again when required', async ({
    assert,
  }) => {
    const user = await authUser({ totp: 'optional' })
    const plain = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.isString(plain.body.jwt)
    await enrol(user)
    await authUsers.resetTotp(user)
    const again = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.isTrue(again.body.twoFactorSetupRequired)
  })
})
