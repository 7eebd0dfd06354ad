import { test } from '@japa/runner'
import {
  authUser,
  call,
  codeFor,
  decodeJwt,
  post,
  registerClient,
  resetAuthState,
  TEST_PASSWORD,
  authConfig,
  clock,
} from '../helpers.js'

const CLIENT = 'oidc-test-app'
const REDIRECT = 'https://app.example.test/callback?from=quire'

async function authorize(params: Record<string, string>) {
  const query = new URLSearchParams({
    client_id: CLIENT,
    redirect_uri: REDIRECT,
    ...params,
  }).toString()
  return call('GET', `/authorize?${query}`)
}

test.group('auth_service: OIDC-style bootstrap', (group) => {
  group.setup(() => registerClient(CLIENT, [REDIRECT, 'http://localhost:5173/cb']))
  group.each.setup(() => resetAuthState())

  test('response_mode=query: the completed login answers the redirect with the token appended', async ({
    assert,
  }) => {
    const started = await authorize({ state: 'st-123', nonce: 'n-456', lang: 'fr', ui: 'compact' })
    assert.equal(started.status, 200, started.text)
    assert.isString(started.body.request_id)
    assert.deepEqual(started.body.passThroughParameters, { lang: 'fr', ui: 'compact' })
    assert.equal(started.body.client.client_id, CLIENT)

    const user = await authUser()
    const done = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      request_id: started.body.request_id,
    })
    assert.equal(done.status, 200, done.text)
    assert.deepEqual(done.body.passThroughParameters, { lang: 'fr', ui: 'compact' })
    const redirect = new URL(done.body.redirect)
    assert.equal(`${redirect.origin}${redirect.pathname}`, 'https://app.example.test/callback')
    assert.equal(redirect.searchParams.get('from'), 'quire', 'the registered query is kept')
    assert.equal(redirect.searchParams.get('token'), done.body.jwt)
    assert.equal(redirect.searchParams.get('state'), 'st-123')
    assert.notProperty(done.body, 'form_post')
    const { payload } = decodeJwt(done.body.jwt)
    assert.equal(payload.nonce, 'n-456')
    assert.equal(payload.aud, CLIENT)
  })

  test('response_mode=form_post: an auto-submitting HTML form posting the token', async ({
    assert,
  }) => {
    const started = await call('POST', '/authorize', {
      form: {
        client_id: CLIENT,
        redirect_uri: REDIRECT,
        response_mode: 'form_post',
        state: '<"x">',
      },
    })
    assert.equal(started.status, 200, started.text)
    const user = await authUser()
    const done = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      request_id: started.body.request_id,
    })
    assert.equal(done.status, 200, done.text)
    const html: string = done.body.form_post
    assert.include(
      html,
      '<form method="post" action="https://app.example.test/callback?from=quire"'
    )
    assert.include(html, `name="token" value="${done.body.jwt}"`)
    assert.include(html, 'name="state" value="&lt;&quot;x&quot;&gt;"', 'values are escaped')
    assert.include(html, 'document.forms[0].submit()')
    assert.equal(done.body.redirect, REDIRECT)
  })

  test('with an enforced TOTP setup, confirm answers the redirect and the pass-through parameters', async ({
    assert,
  }) => {
    const started = await authorize({ state: 's', tenant: 'acme' })
    const user = await authUser({ totp: 'required' })
    const setup = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      request_id: started.body.request_id,
    })
    assert.isTrue(setup.body.twoFactorSetupRequired)
    assert.deepEqual(setup.body.passThroughParameters, { tenant: 'acme' })
    const done = await post('/login/2fa/setup/confirm', {
      setup_token: setup.body.setup_token,
      code: await codeFor(setup.body.twoFactorData.secret),
    })
    assert.equal(done.status, 200, done.text)
    assert.deepEqual(done.body.passThroughParameters, { tenant: 'acme' })
    assert.include(done.body.redirect, `token=${done.body.jwt}`)
  })

  test('an OIDC request that expired during the setup fails the confirm (7.B)', async ({
    assert,
  }) => {
    const started = await authorize({ state: 's' })
    clock.advance((authConfig.ttl.requestSeconds - 60) * 1000)
    const user = await authUser({ totp: 'required' })
    const setup = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      request_id: started.body.request_id,
    })
    assert.isString(setup.body.setup_token, setup.text)
    clock.advance(120 * 1000)
    const answer = await post('/login/2fa/setup/confirm', {
      setup_token: setup.body.setup_token,
      code: await codeFor(setup.body.twoFactorData.secret),
    })
    assert.equal(answer.status, 400)
    assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'message', 'success'])
    assert.equal(answer.body.error, 'authorization_request_expired')
  })

  test('an expired, used or unknown authorization request is refused at login', async ({
    assert,
  }) => {
    const user = await authUser()
    const expired = await authorize({})
    clock.advance((authConfig.ttl.requestSeconds + 1) * 1000)
    const late = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      request_id: expired.body.request_id,
    })
    assert.equal(late.body.error, 'authorization_request_expired')
    clock.reset()

    const once = await authorize({})
    assert.equal(
      await post('/login', {
        login: user.email,
        password: TEST_PASSWORD,
        request_id: once.body.request_id,
      }).then((reply) => reply.status),
      200
    )
    const twice = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      request_id: once.body.request_id,
    })
    assert.equal(twice.body.error, 'authorization_request_expired')

    const unknown = await post('/login', {
      login: user.email,
      password: TEST_PASSWORD,
      request_id: 'ar_nothing',
    })
    assert.equal(unknown.status, 400)
    assert.equal(unknown.body.error, 'unknown_request')
  })

  test('unknown clients, unregistered redirect URIs and bad response modes are refused', async ({
    assert,
  }) => {
    const unknownClient = await call(
      'GET',
      `/authorize?client_id=nobody&redirect_uri=${encodeURIComponent(REDIRECT)}`
    )
    assert.equal(unknownClient.status, 400)
    assert.equal(unknownClient.body.error, 'invalid_client')
    const badRedirect = await authorize({ redirect_uri: 'https://evil.example.test/cb' })
    assert.equal(badRedirect.status, 400)
    assert.equal(badRedirect.body.error, 'invalid_redirect_uri')
    const badMode = await authorize({ response_mode: 'fragment' })
    assert.equal(badMode.status, 422)
    assert.isArray(badMode.body.errors.response_mode)
    const missing = await call('GET', '/authorize')
    assert.equal(missing.status, 422)
    assert.isArray(missing.body.errors.client_id)
    assert.isArray(missing.body.errors.redirect_uri)
  })
})
