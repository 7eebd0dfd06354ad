import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import quireConfig from '#config/quire'
import { CredentialService } from '#core/services/credential_service'
import { rpc } from '#tests/helpers/rpc'
import { serverUrl } from '#tests/helpers/server'
import { TEST_PASSWORD, makeUser } from '#tests/helpers/users'

const credentials = await app.container.make(CredentialService)

let addresses = 0
/** A client address of its own (sent as X-Forwarded-For, trusted from loopback): no shared counter. */
const freshAddress = () => `198.51.100.${++addresses}`

/** createOauthkey over real HTTP from a given client address. */
async function createOauthkey(key: string, login: string, pwd: string, address: string) {
  const response = await fetch(`${serverUrl()}/live/api.php`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Forwarded-For': address,
    },
    body: new URLSearchParams({ req: 'createOauthkey', appkey: key, login, pwd }).toString(),
  })
  return (await response.json()) as Record<string, any>
}

async function appkey() {
  const answer = await rpc({ req: 'createAppkey', appname: 'Credentials' })
  return answer.body.appkey as string
}

/**
 * Counts the hash verifications made while `run` runs, by wrapping the
 * application's hash manager (every password check goes through it).
 */
async function countingVerifications(run: () => Promise<void>) {
  const manager = await app.container.make('hash')
  const original = manager.verify
  let count = 0
  manager.verify = function (this: typeof manager, ...args: Parameters<typeof original>) {
    count++
    return original.apply(this, args)
  }
  try {
    await run()
  } finally {
    manager.verify = original
  }
  return count
}

test.group('createOauthkey: the shared credential check', () => {
  test('an unknown login and a wrong password each cost exactly one hash verification', async ({
    assert,
  }) => {
    const user = await makeUser()
    const key = await appkey()
    const address = freshAddress()
    // Warm: the first request of a run may load modules; the count must not depend on that.
    await createOauthkey(key, user.code, TEST_PASSWORD, address)

    let answer: Record<string, any> = {}
    const unknown = await countingVerifications(async () => {
      answer = await createOauthkey(key, `nobody.${Date.now()}@example.test`, 'nope', address)
    })
    assert.equal(answer.errorCode, 'INVALID_LOGIN')
    const wrong = await countingVerifications(async () => {
      answer = await createOauthkey(key, user.code, 'nope', address)
    })
    assert.equal(answer.errorCode, 'INVALID_LOGIN')
    const right = await countingVerifications(async () => {
      answer = await createOauthkey(key, user.code, TEST_PASSWORD, address)
    })
    assert.equal(answer.status, 'ok')

    assert.equal(unknown, 1, 'an unknown login verifies against the dummy hash')
    assert.equal(wrong, 1)
    assert.equal(right, 1)
    await credentials.reset({ ip: address })
  })

  test('a success clears the login counter, not the address counter', async ({ assert }) => {
    const user = await makeUser()
    const key = await appkey()
    const address = freshAddress()
    const { maxAttempts } = quireConfig.login
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      const answer = await createOauthkey(key, user.code, 'nope', address)
      assert.equal(answer.errorCode, 'INVALID_LOGIN')
    }
    assert.equal(
      await createOauthkey(key, user.code, TEST_PASSWORD, address).then((answer) => answer.status),
      'ok'
    )
    // A fresh allowance for the login: maxAttempts - 1 failures again are not blocked.
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      const answer = await createOauthkey(key, user.code, 'nope', address)
      assert.equal(answer.errorCode, 'INVALID_LOGIN')
    }
    assert.equal(
      await createOauthkey(key, user.code, TEST_PASSWORD, address).then((answer) => answer.status),
      'ok'
    )
    await credentials.reset({ ip: address })
  })

  test('LOGIN_MAX_ATTEMPTS_PER_ADDRESS failures from one address block every login from it', async ({
    assert,
  }) => {
    const user = await makeUser()
    const key = await appkey()
    const address = freshAddress()
    const limit = quireConfig.login.maxAttemptsPerAddress
    // Each failure on a different unknown login: only the address counter reaches its limit.
    for (let attempt = 1; attempt < limit; attempt++) {
      const answer = await createOauthkey(
        key,
        `guess${attempt}.${Date.now()}@x.test`,
        'no',
        address
      )
      assert.equal(answer.errorCode, 'INVALID_LOGIN')
    }
    assert.equal(
      await createOauthkey(key, user.code, TEST_PASSWORD, address).then((answer) => answer.status),
      'ok'
    )
    await createOauthkey(key, `last.${Date.now()}@x.test`, 'no', address)

    const blocked = await createOauthkey(key, user.code, TEST_PASSWORD, address)
    assert.equal(blocked.errorCode, 'TOO_MANY_ATTEMPTS')
    assert.isAbove(blocked.retryAfter, 0)
    const elsewhere = await createOauthkey(key, user.code, TEST_PASSWORD, freshAddress())
    assert.equal(elsewhere.status, 'ok', 'the limit is per address')
    await credentials.reset({ ip: address })
  })
})
