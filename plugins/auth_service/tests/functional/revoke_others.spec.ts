import { test } from '@japa/runner'
import { rpc } from '#tests/helpers/rpc'
import { login as apiLogin } from '#tests/helpers/users'
import { authUser, call, post, resetAuthState, signIn, authConfig } from '../helpers.js'

const revokeOthers = (jwt?: string) => call('POST', '/api/sessions/revoke-others', { token: jwt })
const me = (jwt: string) => call('GET', '/api/me', { token: jwt })

test.group('auth_service: revoke-others (4.B.1)', (group) => {
  group.each.setup(() => resetAuthState())

  test('revokes every other session of both worlds; only the current one remains', async ({
    assert,
  }) => {
    const user = await authUser()
    const current = await signIn(user)
    const others = [await signIn(user), await signIn(user), await signIn(user)]
    const apiSessions = [await apiLogin(user), await apiLogin(user)]
    const bystander = await signIn(await authUser())
    for (const session of others)
      assert.equal(
        await me(session.jwt).then((reply) => reply.status),
        200,
        'cached as active first'
      )

    const answer = await revokeOthers(current.jwt)
    assert.equal(answer.status, 200, answer.text)
    assert.isTrue(answer.body.success)
    assert.isString(answer.body.message)
    assert.equal(answer.body.revoked, others.length + apiSessions.length)
    assert.isTrue(Number.isInteger(answer.body.revoked))
    assert.deepEqual(answer.body.details, { auth_sessions: 3, api_sessions: 2, oauthkeys: 2 })

    // Each revoked session's access token fails from its very next request.
    for (const session of others) {
      const next = await me(session.jwt)
      assert.equal(next.status, 401)
      assert.equal(next.body.error, 'unauthorized')
      const refresh = await post('/token/refresh', { refresh_token: session.refresh_token })
      assert.equal(refresh.body.error, 'invalid_refresh_token', 'the refresh chain is invalidated')
    }
    for (const session of apiSessions) {
      const info = await rpc({ req: 'getUserInfo', o_u: session.o_u, sesskey: session.sesskey })
      assert.equal(info.body.status, 'nok', 'the api.php sesskey is dropped too')
      assert.equal(info.body.errorCode, 'INVALID_SESSKEY', info.text)
    }
    assert.equal(
      await me(current.jwt).then((reply) => reply.status),
      200,
      'the current session remains'
    )
    assert.equal(
      await post('/token/refresh', { refresh_token: current.refresh_token }).then(
        (reply) => reply.status
      ),
      200
    )
    assert.equal(
      await me(bystander.jwt).then((reply) => reply.status),
      200,
      'other users are untouched'
    )

    const nothingLeft = await revokeOthers(current.jwt)
    assert.equal(nothingLeft.body.revoked, 0)
  })

  test('without valid authentication it answers the unauthorized body with 401', async ({
    assert,
  }) => {
    const user = await authUser()
    const revoked = await signIn(user)
    const current = await signIn(user)
    await revokeOthers(current.jwt)
    for (const token of [undefined, 'not-a-jwt', revoked.jwt]) {
      const answer = await revokeOthers(token)
      assert.equal(answer.status, 401)
      assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'message', 'success'])
      assert.isFalse(answer.body.success)
      assert.equal(answer.body.error, 'unauthorized')
      assert.isString(answer.body.message)
    }
  })

  test('over the rate limit it answers too_many_requests with retry_after (429)', async ({
    assert,
  }) => {
    const user = await authUser()
    const current = await signIn(user)
    for (let index = 0; index < authConfig.revokeOthers.maxRequests; index++) {
      assert.equal(await revokeOthers(current.jwt).then((reply) => reply.status), 200)
    }
    const limited = await revokeOthers(current.jwt)
    assert.equal(limited.status, 429, limited.text)
    assert.deepEqual(Object.keys(limited.body).sort(), [
      'error',
      'message',
      'retry_after',
      'success',
    ])
    assert.isFalse(limited.body.success)
    assert.equal(limited.body.error, 'too_many_requests')
    assert.isString(limited.body.message)
    assert.isTrue(Number.isInteger(limited.body.retry_after) && limited.body.retry_after > 0)
    assert.equal(limited.headers.get('retry-after'), String(limited.body.retry_after))

    // The limit is per user: another user is not affected.
    const other = await signIn(await authUser())
    assert.equal(await revokeOthers(other.jwt).then((reply) => reply.status), 200)
  })

  test('takes no body and ignores one', async ({ assert }) => {
    const user = await authUser()
    const current = await signIn(user)
    const answer = await call('POST', '/api/sessions/revoke-others', {
      token: current.jwt,
      raw: '{"anything": 1}',
    })
    assert.equal(answer.status, 200, answer.text)
  })
})

test.group('auth_service: dropAllSessions (api.php) ends auth sessions too', (group) => {
  group.each.setup(() => resetAuthState())

  test('every auth session of the user is revoked; other users are untouched', async ({
    assert,
  }) => {
    const user = await authUser()
    const signedIn = [await signIn(user), await signIn(user)]
    const bystander = await signIn(await authUser())
    const kept = await apiLogin(user)
    const dropped = await rpc({
      req: 'dropAllSessions',
      o_u: kept.o_u,
      u_c: kept.o_u,
      sesskey: kept.sesskey,
    })
    assert.equal(dropped.body.status, 'ok', dropped.text)
    for (const session of signedIn) {
      assert.equal(await me(session.jwt).then((reply) => reply.status), 401)
      const refresh = await post('/token/refresh', { refresh_token: session.refresh_token })
      assert.equal(refresh.body.error, 'invalid_refresh_token')
    }
    assert.equal(await me(bystander.jwt).then((reply) => reply.status), 200)
    const info = await rpc({ req: 'getUserInfo', o_u: kept.o_u, sesskey: kept.sesskey })
    assert.equal(info.body.status, 'ok', 'the kept sesskey still works')
  })
})
