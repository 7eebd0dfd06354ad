import { test } from '@japa/runner'
import quireConfig from '#config/quire'
import { serverUrl } from '#tests/helpers/server'
import { authConfig, authUser, credentials, resetAuthState, TEST_PASSWORD } from '../helpers.js'
import { countingVerifications, createOauthkeyFrom, newAppkey } from '#tests/helpers/credentials'

/**
 * {auth_url}/login and api.php createOauthkey go through one credential check
 * (core's CredentialService): one throttle counter per login and one per
 * address whichever endpoint a failure came through, the same limits, and one
 * hash verification whether the login exists or not.
 */

let addresses = 0
/** A client address of its own (sent as X-Forwarded-For, trusted from loopback). */
const freshAddress = () => `203.0.113.${++addresses}`

async function authLogin(login: string, password: string, address: string) {
  const response = await fetch(`${serverUrl()}${authConfig.prefix}/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': address },
    body: JSON.stringify({ login, password }),
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

test.group('auth_service: one credential check with createOauthkey', (group) => {
  group.each.setup(() => resetAuthState())

  test('failures on createOauthkey count for {auth_url}/login', async ({ assert }) => {
    const user = await authUser()
    const key = await newAppkey('Shared credentials')
    const address = freshAddress()
    for (let attempt = 1; attempt < quireConfig.login.maxAttempts; attempt++) {
      assert.equal(
        await createOauthkeyFrom(key, user.code, 'nope', address).then(
          (answer) => answer.errorCode
        ),
        'INVALID_LOGIN'
      )
    }
    const last = await authLogin(user.code, 'nope', address)
    assert.equal(last.body.error, 'invalid_credentials')

    // LOGIN_MAX_ATTEMPTS failures in all, across both endpoints: both refuse the right password.
    const viaAuth = await authLogin(user.code, TEST_PASSWORD, address)
    assert.equal(viaAuth.status, 429)
    assert.equal(viaAuth.body.error, 'too_many_requests')
    assert.isAbove(viaAuth.body.retry_after, 0)
    const viaApi = await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address)
    assert.equal(viaApi.errorCode, 'TOO_MANY_ATTEMPTS')
    assert.isAbove(viaApi.retryAfter, 0)
    // Per login: another address gets no more tries for this login either.
    const elsewhere = await authLogin(user.code, TEST_PASSWORD, freshAddress())
    assert.equal(elsewhere.status, 429)
    await credentials.reset({ login: user.code, ip: address })
  })

  test('failures on {auth_url}/login count for createOauthkey', async ({ assert }) => {
    const user = await authUser()
    const key = await newAppkey('Shared credentials')
    const address = freshAddress()
    // One counter per login name, whatever its case.
    for (let attempt = 1; attempt < quireConfig.login.maxAttempts; attempt++) {
      assert.equal(
        await authLogin(user.email!, 'nope', address).then((answer) => answer.status),
        401
      )
    }
    const last = await createOauthkeyFrom(key, user.email!.toUpperCase(), 'nope', address)
    assert.equal(last.errorCode, 'INVALID_LOGIN')

    const viaApi = await createOauthkeyFrom(key, user.email!, TEST_PASSWORD, address)
    assert.equal(viaApi.errorCode, 'TOO_MANY_ATTEMPTS')
    const viaAuth = await authLogin(user.email!, TEST_PASSWORD, address)
    assert.equal(viaAuth.body.error, 'too_many_requests')
    await credentials.reset({ login: user.email!, ip: address })
  })

  test('the per-address limit is LOGIN_MAX_ATTEMPTS_PER_ADDRESS on both endpoints, one counter', async ({
    assert,
  }) => {
    const user = await authUser()
    const key = await newAppkey('Shared credentials')
    const address = freshAddress()
    const limit = quireConfig.login.maxAttemptsPerAddress
    // Failures on ever new unknown logins, alternating endpoints: only the address counter grows.
    for (let attempt = 1; attempt < limit; attempt++) {
      const login = `guess${attempt}.${Date.now()}@example.test`
      if (attempt % 2)
        assert.equal(await authLogin(login, 'no', address).then((answer) => answer.status), 401)
      else
        assert.equal(
          await createOauthkeyFrom(key, login, 'no', address).then((answer) => answer.errorCode),
          'INVALID_LOGIN'
        )
    }
    // One short of the limit: a right password still passes on both (a success never
    // clears the address's counter).
    assert.equal(
      await authLogin(user.code, TEST_PASSWORD, address).then((answer) => answer.status),
      200
    )
    assert.equal(
      await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address).then(
        (answer) => answer.status
      ),
      'ok'
    )

    await authLogin(`last.${Date.now()}@example.test`, 'no', address)
    assert.equal(
      await authLogin(user.code, TEST_PASSWORD, address).then((answer) => answer.status),
      429
    )
    assert.equal(
      await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address).then(
        (answer) => answer.errorCode
      ),
      'TOO_MANY_ATTEMPTS'
    )
    assert.equal(
      await authLogin(user.code, TEST_PASSWORD, freshAddress()).then((answer) => answer.status),
      200
    )
    await credentials.reset({ ip: address })
  })

  test('an unknown login and a wrong password each cost exactly one hash verification', async ({
    assert,
  }) => {
    const user = await authUser()
    const address = freshAddress()
    await authLogin(user.code, TEST_PASSWORD, address)

    let answer = { status: 0, body: {} as Record<string, any> }
    const unknown = await countingVerifications(async () => {
      answer = await authLogin(`nobody.${Date.now()}@example.test`, 'nope', address)
    })
    assert.equal(answer.body.error, 'invalid_credentials')
    const wrong = await countingVerifications(async () => {
      answer = await authLogin(user.code, 'nope', address)
    })
    assert.equal(answer.body.error, 'invalid_credentials')
    const right = await countingVerifications(async () => {
      answer = await authLogin(user.code, TEST_PASSWORD, address)
    })
    assert.equal(answer.status, 200)

    assert.equal(unknown, 1, 'an unknown login verifies against the dummy hash')
    assert.equal(wrong, 1)
    assert.equal(right, 1)
    await credentials.reset({ ip: address })
  })
})
