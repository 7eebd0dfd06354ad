import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import quireConfig from '#config/quire'
import { CredentialService } from '#core/services/credential_service'
import { TEST_PASSWORD, makeUser } from '#tests/helpers/users'
import { countingVerifications, createOauthkeyFrom, newAppkey } from '#tests/helpers/credentials'

const credentials = await app.container.make(CredentialService)

let addresses = 0
/** A client address of its own (sent as X-Forwarded-For, trusted from loopback): no shared counter. */
const freshAddress = () => `198.51.100.${++addresses}`

test.group('createOauthkey: the shared credential check', () => {
  test('an unknown login and a wrong password each cost exactly one hash verification', async ({
    assert,
  }) => {
    const user = await makeUser()
    const key = await newAppkey('Credentials')
    const address = freshAddress()
    // Warm: the first request of a run may load modules; the count must not depend on that.
    await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address)

    let answer: Record<string, any> = {}
    const unknown = await countingVerifications(async () => {
      answer = await createOauthkeyFrom(key, `nobody.${Date.now()}@example.test`, 'nope', address)
    })
    assert.equal(answer.errorCode, 'INVALID_LOGIN')
    const wrong = await countingVerifications(async () => {
      answer = await createOauthkeyFrom(key, user.code, 'nope', address)
    })
    assert.equal(answer.errorCode, 'INVALID_LOGIN')
    const right = await countingVerifications(async () => {
      answer = await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address)
    })
    assert.equal(answer.status, 'ok')

    assert.equal(unknown, 1, 'an unknown login verifies against the dummy hash')
    assert.equal(wrong, 1)
    assert.equal(right, 1)
    await credentials.reset({ ip: address })
  })

  test('a success clears the login counter, not the address counter', async ({ assert }) => {
    const user = await makeUser()
    const key = await newAppkey('Credentials')
    const address = freshAddress()
    const { maxAttempts } = quireConfig.login
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      const answer = await createOauthkeyFrom(key, user.code, 'nope', address)
      assert.equal(answer.errorCode, 'INVALID_LOGIN')
    }
    assert.equal(
      await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address).then(
        (answer) => answer.status
      ),
      'ok'
    )
    // A fresh allowance for the login: maxAttempts - 1 failures again are not blocked.
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      const answer = await createOauthkeyFrom(key, user.code, 'nope', address)
      assert.equal(answer.errorCode, 'INVALID_LOGIN')
    }
    assert.equal(
      await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address).then(
        (answer) => answer.status
      ),
      'ok'
    )
    await credentials.reset({ ip: address })
  })

  test('LOGIN_MAX_ATTEMPTS_PER_ADDRESS failures from one address block every login from it', async ({
    assert,
  }) => {
    const user = await makeUser()
    const key = await newAppkey('Credentials')
    const address = freshAddress()
    const limit = quireConfig.login.maxAttemptsPerAddress
    // Each failure on a different unknown login: only the address counter reaches its limit.
    for (let attempt = 1; attempt < limit; attempt++) {
      const answer = await createOauthkeyFrom(
        key,
        `guess${attempt}.${Date.now()}@x.test`,
        'no',
        address
      )
      assert.equal(answer.errorCode, 'INVALID_LOGIN')
    }
    assert.equal(
      await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address).then(
        (answer) => answer.status
      ),
      'ok'
    )
    await createOauthkeyFrom(key, `last.${Date.now()}@x.test`, 'no', address)

    const blocked = await createOauthkeyFrom(key, user.code, TEST_PASSWORD, address)
    assert.equal(blocked.errorCode, 'TOO_MANY_ATTEMPTS')
    assert.isAbove(blocked.retryAfter, 0)
    const elsewhere = await createOauthkeyFrom(key, user.code, TEST_PASSWORD, freshAddress())
    assert.equal(elsewhere.status, 'ok', 'the limit is per address')
    await credentials.reset({ ip: address })
  })
})
