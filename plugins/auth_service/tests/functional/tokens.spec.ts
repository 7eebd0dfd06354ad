import { test } from '@japa/runner'
import { SignJWT } from 'jose'
import { authUser, call, post, resetAuthState, signIn, authConfig, clock } from '../helpers.js'

const me = (jwt: string) => call('GET', '/api/me', { token: jwt })

test.group('auth_service: access tokens', (group) => {
  group.each.setup(() => resetAuthState())

  test('a bearer token opens the protected endpoints', async ({ assert }) => {
    const user = await authUser()
    const body = await signIn(user)
    const answer = await me(body.jwt)
    assert.equal(answer.status, 200, answer.text)
    assert.deepEqual(answer.body.user, { id: body.user.id, email: user.email, code: user.code })
    const sessions = await call('GET', '/api/sessions', { token: body.jwt })
    assert.equal(sessions.body.sessions.length, 1)
    assert.equal(sessions.body.current, sessions.body.sessions[0].id)
  })

  test('missing, malformed, tampered and expired tokens answer unauthorized (401)', async ({
    assert,
  }) => {
    const user = await authUser()
    const { jwt } = await signIn(user)
    const [header, payload, signature] = jwt.split('.')
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, uid: claims.uid + 1 })).toString('base64url')}.${signature}`
    const wrongKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: authConfig.jwtKeys[0].kid })
      .sign(new TextEncoder().encode('another secret that is long enough, really'))
    const unknownKid = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: 'retired' })
      .sign(authConfig.jwtKeys[0].secret)

    for (const [label, headers] of [
      ['none', {}],
      ['not bearer', { Authorization: `Basic ${jwt}` }],
      ['garbage', { Authorization: 'Bearer abc.def' }],
      ['forged payload', { Authorization: `Bearer ${forged}` }],
      ['wrong key', { Authorization: `Bearer ${wrongKey}` }],
      ['unknown kid', { Authorization: `Bearer ${unknownKid}` }],
    ] as const) {
      const answer = await call('GET', '/api/me', { headers })
      assert.equal(answer.status, 401, label)
      assert.deepEqual(
        answer.body,
        { success: false, error: 'unauthorized', message: answer.body.message },
        label
      )
      assert.isString(answer.body.message)
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer')
    }

    clock.advance((authConfig.ttl.accessSeconds + 5) * 1000)
    const expired = await me(jwt)
    assert.equal(expired.status, 401)
    assert.equal(expired.body.error, 'unauthorized')
  })
})

test.group('auth_service: refresh tokens', (group) => {
  group.each.setup(() => resetAuthState())

  test('a refresh rotates both tokens; the new ones work', async ({ assert }) => {
    const user = await authUser()
    const first = await signIn(user)
    clock.advance(2000)
    const refreshed = await post('/token/refresh', { refresh_token: first.refresh_token })
    assert.equal(refreshed.status, 200, refreshed.text)
    assert.isTrue(refreshed.body.success)
    assert.notEqual(refreshed.body.refresh_token, first.refresh_token)
    assert.notEqual(refreshed.body.jwt, first.jwt)
    assert.equal(refreshed.body.expires_in, authConfig.ttl.accessSeconds)
    assert.equal(await me(refreshed.body.jwt).then((reply) => reply.status), 200)
    const again = await post('/token/refresh', { refresh_token: refreshed.body.refresh_token })
    assert.equal(again.status, 200, again.text)
  })

  test('reusing a spent refresh token revokes the whole chain', async ({ assert }) => {
    const user = await authUser()
    const first = await signIn(user)
    const second = await post('/token/refresh', { refresh_token: first.refresh_token }).then(
      (answer) => answer.body
    )
    const third = await post('/token/refresh', { refresh_token: second.refresh_token }).then(
      (answer) => answer.body
    )
    assert.isString(third.refresh_token)

    const reuse = await post('/token/refresh', { refresh_token: first.refresh_token })
    assert.equal(reuse.status, 401)
    assert.equal(reuse.body.error, 'refresh_token_reused')
    // The newest token of the chain and every access token of the session are dead too.
    const latest = await post('/token/refresh', { refresh_token: third.refresh_token })
    assert.equal(latest.status, 401)
    assert.equal(latest.body.error, 'invalid_refresh_token')
    assert.equal(await me(third.jwt).then((reply) => reply.status), 401)
    assert.equal(await me(first.jwt).then((reply) => reply.status), 401)
  })

  test('the chain of one session dies alone: other sessions of the user keep working', async ({
    assert,
  }) => {
    const user = await authUser()
    const stolen = await signIn(user)
    const other = await signIn(user)
    await post('/token/refresh', { refresh_token: stolen.refresh_token })
    await post('/token/refresh', { refresh_token: stolen.refresh_token })
    assert.equal(await me(other.jwt).then((reply) => reply.status), 200)
    assert.equal(
      await post('/token/refresh', { refresh_token: other.refresh_token }).then(
        (answer) => answer.status
      ),
      200
    )
  })

  test('concurrent refreshes with one token: one wins, the chain is revoked for the others', async ({
    assert,
  }) => {
    const user = await authUser()
    const first = await signIn(user)
    const answers = await Promise.all(
      [1, 2].map(() => post('/token/refresh', { refresh_token: first.refresh_token }))
    )
    const statuses = answers.map((answer) => answer.status).sort()
    assert.deepEqual(statuses, [200, 401])
  })

  test('an unknown or expired refresh token answers invalid_refresh_token', async ({ assert }) => {
    const unknown = await post('/token/refresh', { refresh_token: 'rt_nothing' })
    assert.equal(unknown.status, 401)
    assert.deepEqual(Object.keys(unknown.body).sort(), ['error', 'message', 'success'])
    assert.equal(unknown.body.error, 'invalid_refresh_token')

    const user = await authUser()
    const body = await signIn(user)
    clock.advance((authConfig.ttl.refreshSeconds + 1) * 1000)
    const expired = await post('/token/refresh', { refresh_token: body.refresh_token })
    assert.equal(expired.status, 401)
    assert.equal(expired.body.error, 'invalid_refresh_token')
  })

  test('a refresh without a token is a validation_error', async ({ assert }) => {
    const answer = await post('/token/refresh', {})
    assert.equal(answer.status, 422)
    assert.isArray(answer.body.errors.refresh_token)
  })
})

test.group('auth_service: logout', (group) => {
  group.each.setup(() => resetAuthState())

  test('logout with the bearer token ends the session: token and refresh token die', async ({
    assert,
  }) => {
    const user = await authUser()
    const body = await signIn(user)
    const out = await post('/logout', {}, body.jwt)
    assert.equal(out.status, 200, out.text)
    assert.isTrue(out.body.success)
    assert.equal(await me(body.jwt).then((reply) => reply.status), 401)
    assert.equal(
      await post('/token/refresh', { refresh_token: body.refresh_token }).then(
        (answer) => answer.body.error
      ),
      'invalid_refresh_token'
    )
  })

  test('logout with only the refresh token works too; nothing at all is unauthorized', async ({
    assert,
  }) => {
    const user = await authUser()
    const body = await signIn(user)
    assert.equal(
      await post('/logout', { refresh_token: body.refresh_token }).then((reply) => reply.status),
      200
    )
    assert.equal(await me(body.jwt).then((reply) => reply.status), 401)
    const nothing = await post('/logout', {})
    assert.equal(nothing.status, 401)
    assert.equal(nothing.body.error, 'unauthorized')
  })
})
