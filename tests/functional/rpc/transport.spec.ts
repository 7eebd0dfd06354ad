import { test } from '@japa/runner'
import { ALL_FORMS, rpc } from '#tests/helpers/rpc'
import { serverUrl } from '#tests/helpers/server'
import { login, makeUser } from '#tests/helpers/users'

test.group('api.php transport', () => {
  test('getUserInfo answers the same in every parameter form ({$self})')
    .with(ALL_FORMS)
    .run(async ({ assert }, form) => {
      const user = await makeUser()
      const session = await login(user, { form })
      const answer = await rpc(
        {
          req: 'getUserInfo',
          version: '6.49q/6.49',
          o_u: session.o_u,
          u_c: session.o_u,
          sesskey: session.sesskey,
        },
        form
      )
      assert.equal(answer.status, 200)
      assert.equal(answer.contentType, 'application/json')
      assert.equal(answer.body.status, 'ok', answer.text)
      assert.equal(answer.body.req, 'getUserInfo')
      assert.equal(answer.body.createdVNB, 'live-6.49q/6.49')
      assert.equal(answer.body.userInfo.u_c, user.code)
    })

  test('the trailing-slash path serves the same endpoint', async ({ assert }) => {
    const answer = await rpc(
      { req: 'createAppkey', appname: 'slash' },
      'urlencoded',
      '/live/api.php/'
    )
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.match(answer.body.appkey, /^([A-Za-z0-9]{4}-){6}[A-Za-z0-9]{4}$/)
  })

  test('`r` names the operation like `req`', async ({ assert }) => {
    const answer = await rpc({ r: 'createAppkey', appname: 'with r' })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.equal(answer.body.req, 'createAppkey')
  })

  test('query string and body are merged, the body winning', async ({ assert }) => {
    const user = await makeUser()
    const app = await rpc({ req: 'createAppkey', appname: 'merge' })
    const query = new URLSearchParams({
      req: 'createOauthkey',
      appkey: app.body.appkey,
      pwd: 'wrong password',
    })
    const response = await fetch(`${serverUrl()}/live/api.php?${query}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ login: user.code, pwd: 'correct horse battery' }).toString(),
    })
    const body = (await response.json()) as Record<string, any>
    assert.equal(body.status, 'ok', JSON.stringify(body))
    assert.equal(body.req, 'createOauthkey')
    assert.equal(body.o_u, user.code)
  })

  test('`+` in a urlencoded body is a space and version may be missing', async ({ assert }) => {
    const user = await makeUser()
    const app = await rpc({ req: 'createAppkey', appname: 'plus' })
    const response = await fetch(`${serverUrl()}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `req=createOauthkey&appkey=${app.body.appkey}&login=${encodeURIComponent(user.email!)}&pwd=correct+horse+battery`,
    })
    const body = (await response.json()) as Record<string, any>
    assert.equal(body.status, 'ok', JSON.stringify(body))
    assert.equal(body.o_u, user.code)
  })

  test('unknown parameters are ignored', async ({ assert }) => {
    const session = await login(await makeUser())
    const answer = await rpc({
      req: 'getUserInfo',
      o_u: session.o_u,
      sesskey: session.sesskey,
      skipAuthorizationForFiles: '1',
      returnUpdatedRows: 'true',
      updatedAt: '12',
      pageSize: '5',
      includeContextChanges: 'x',
    })
    assert.equal(answer.body.status, 'ok', answer.text)
  })

  test('an unknown operation is a nok with UNKNOWN_OPERATION, HTTP 200', async ({ assert }) => {
    const answer = await rpc({ req: 'noSuchOperation' })
    assert.equal(answer.status, 200)
    assert.equal(answer.contentType, 'application/json')
    assert.deepInclude(answer.body, {
      status: 'nok',
      req: 'noSuchOperation',
      errorCode: 'UNKNOWN_OPERATION',
    })
    assert.isString(answer.body.errorMsg)
    assert.match(answer.body.error, /^apiProcess\d+: /)
    assert.equal(answer.body.createdVNB, 'live-6.49q/6.49')
  })

  test('a request without req is a nok with MISSING_PARAMETER', async ({ assert }) => {
    const answer = await rpc({ appname: 'x' }, 'get')
    assert.equal(answer.status, 200)
    assert.deepInclude(answer.body, { status: 'nok', req: '', errorCode: 'MISSING_PARAMETER' })
  })

  test('a malformed JSON body is a nok with INVALID_PARAMETER, never a 500', async ({ assert }) => {
    const response = await fetch(`${serverUrl()}/live/api.php?req=createAppkey`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"appname": ',
    })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'application/json')
    const body = (await response.json()) as Record<string, any>
    assert.deepInclude(body, { status: 'nok', req: 'createAppkey', errorCode: 'INVALID_PARAMETER' })
  })

  test('a JSON body that is not an object is a nok', async ({ assert }) => {
    const response = await fetch(`${serverUrl()}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '[1,2]',
    })
    const body = (await response.json()) as Record<string, any>
    assert.equal(body.errorCode, 'INVALID_PARAMETER')
  })

  test('JSON numbers and booleans are accepted where strings are expected', async ({ assert }) => {
    const response = await fetch(`${serverUrl()}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ req: 'createAppkey', appname: 12345 }),
    })
    const body = (await response.json()) as Record<string, any>
    assert.equal(body.status, 'ok', JSON.stringify(body))
  })

  test('a wrong parameter type is a nok with INVALID_PARAMETER naming the field', async ({
    assert,
  }) => {
    const session = await login(await makeUser())
    const answer = await rpc({
      req: 'getUserInfo',
      o_u: session.o_u,
      sesskey: session.sesskey,
      sstamp: 'yesterday',
    })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'INVALID_PARAMETER' })
    assert.include(answer.body.errorMsg, 'sstamp')
  })

  test('an oversized parameter is refused cleanly', async ({ assert }) => {
    const answer = await rpc({ req: 'createAppkey', appname: 'x'.repeat(500) })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'INVALID_PARAMETER' })
  })
})
