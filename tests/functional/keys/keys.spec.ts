import application from '@adonisjs/core/services/app'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { rpc } from '#tests/helpers/rpc'
import { dbTimestamp } from '#core/db_time'
import { TEST_PASSWORD, login, makeUser } from '#tests/helpers/users'

const KEY_SHAPE = /^([A-Za-z0-9]{4}-){6}[A-Za-z0-9]{4}$/

async function appkey() {
  const answer = await rpc({ req: 'createAppkey', appname: 'Keys App' })
  return answer.body.appkey as string
}

test.group('createAppkey', () => {
  test('answers an appkey and a digit-string id', async ({ assert }) => {
    const answer = await rpc({ req: 'createAppkey', version: '1.47', appname: 'My App' })
    assert.equal(answer.body.status, 'ok')
    assert.match(answer.body.appkey, KEY_SHAPE)
    assert.match(answer.body.id, /^\d+$/)
  })

  test('keys are stored hashed, never in clear', async ({ assert }) => {
    const answer = await rpc({ req: 'createAppkey', appname: 'Hashed' })
    const row = await db.from('applications').where('id', Number(answer.body.id)).firstOrFail()
    assert.notEqual(row.key_hash, answer.body.appkey)
    assert.notInclude(JSON.stringify(row), answer.body.appkey)
  })

  test('a missing or blank appname is MISSING_PARAMETER ({$self})')
    .with([{}, { appname: '' }, { appname: '   ' }])
    .run(async ({ assert }, extra) => {
      const answer = await rpc({ req: 'createAppkey', ...extra })
      assert.equal(answer.body.status, 'nok')
      assert.oneOf(answer.body.errorCode, ['MISSING_PARAMETER', 'INVALID_PARAMETER'])
      assert.include(answer.body.errorMsg, 'appname')
    })
})

test.group('createOauthkey', () => {
  test('logs in by {$self} and answers the canonical o_u')
    .with(['code', 'email', 'phone', 'EMAIL in capitals'])
    .run(async ({ assert }, how) => {
      const user = await makeUser()
      const loginName =
        how === 'code'
          ? user.code
          : how === 'email'
            ? user.email!
            : how === 'phone'
              ? user.phone!
              : user.email!.toUpperCase()
      const answer = await rpc({
        req: 'createOauthkey',
        appkey: await appkey(),
        login: loginName,
        pwd: TEST_PASSWORD,
      })
      assert.equal(answer.body.status, 'ok', answer.text)
      assert.match(answer.body.oauthkey, KEY_SHAPE)
      assert.match(answer.body.id, /^\d+$/)
      assert.equal(answer.body.o_u, user.code)
    })

  test('an invalid appkey is INVALID_APPKEY with an apiProcess error', async ({ assert }) => {
    const user = await makeUser()
    const answer = await rpc({
      req: 'createOauthkey',
      appkey: 'AAAA-BBBB',
      login: user.code,
      pwd: TEST_PASSWORD,
    })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'INVALID_APPKEY' })
    assert.match(answer.body.error, /^apiProcess\d+: invalid appkey/)
  })

  test('a wrong password or unknown login is INVALID_LOGIN', async ({ assert }) => {
    const user = await makeUser()
    const key = await appkey()
    const wrong = await rpc({ req: 'createOauthkey', appkey: key, login: user.code, pwd: 'nope' })
    assert.deepInclude(wrong.body, { status: 'nok', errorCode: 'INVALID_LOGIN' })
    const unknown = await rpc({
      req: 'createOauthkey',
      appkey: key,
      login: 'nobody@example.test',
      pwd: 'nope',
    })
    assert.deepInclude(unknown.body, { status: 'nok', errorCode: 'INVALID_LOGIN' })
  })

  test('missing {$self} is MISSING_PARAMETER')
    .with(['appkey', 'login', 'pwd'])
    .run(async ({ assert }, missing) => {
      const user = await makeUser()
      const params: Record<string, string> = {
        req: 'createOauthkey',
        appkey: await appkey(),
        login: user.code,
        pwd: TEST_PASSWORD,
      }
      delete params[missing]
      const answer = await rpc(params)
      assert.deepInclude(answer.body, { status: 'nok', errorCode: 'MISSING_PARAMETER' })
      assert.include(answer.body.errorMsg, missing)
    })

  test('failed logins are rate limited, then even the right password is refused', async ({
    assert,
  }) => {
    const user = await makeUser()
    const key = await appkey()
    // LOGIN_MAX_ATTEMPTS is 5 in .env.test
    for (let attempt = 0; attempt < 5; attempt++) {
      const answer = await rpc({
        req: 'createOauthkey',
        appkey: key,
        login: user.code,
        pwd: 'wrong',
      })
      assert.equal(answer.body.errorCode, 'INVALID_LOGIN')
    }
    const blocked = await rpc({
      req: 'createOauthkey',
      appkey: key,
      login: user.code,
      pwd: TEST_PASSWORD,
    })
    assert.deepInclude(blocked.body, { status: 'nok', errorCode: 'TOO_MANY_ATTEMPTS' })
    assert.isAbove(blocked.body.retryAfter, 0)
    assert.match(blocked.body.errorMsg, /retry in \d+ seconds/)
  })

  test('createUserAccount is refused while the option is off', async ({ assert }) => {
    const answer = await rpc({
      req: 'createOauthkey',
      appkey: await appkey(),
      login: `new.${Date.now()}@example.test`,
      pwd: 'a long password',
      createUserAccount: 'true',
    })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'ACCOUNT_CREATION_DISABLED' })
  })
})

test.group('createSesskey', () => {
  test('works with only o_u and oauthkey, answering appName and restrictions', async ({
    assert,
  }) => {
    const user = await makeUser()
    const app = await rpc({ req: 'createAppkey', appname: 'Named App' })
    const oauth = await rpc({
      req: 'createOauthkey',
      appkey: app.body.appkey,
      login: user.email,
      pwd: TEST_PASSWORD,
    })
    const answer = await rpc({
      req: 'createSesskey',
      o_u: oauth.body.o_u,
      oauthkey: oauth.body.oauthkey,
      restrictions: '',
    })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.match(answer.body.sesskey, KEY_SHAPE)
    assert.match(answer.body.id, /^\d+$/)
    assert.equal(answer.body.appName, 'Named App')
    assert.deepEqual(answer.body.restrictions, {
      carnet_code: null,
      carnet_owner: null,
      readonly: false,
      hideTables: false,
      hideMessages: false,
      hideEvents: false,
      internal: false,
    })
  })

  test('restrictions arrive as {$self}')
    .with(['json', 'brackets', 'list'])
    .run(async ({ assert }, shape) => {
      const user = await makeUser()
      const restrictions =
        shape === 'json'
          ? JSON.stringify({ readonly: true, carnet_code: 'notes', carnet_owner: user.code })
          : shape === 'brackets'
            ? { readonly: '1', carnet_code: 'notes', carnet_owner: user.code }
            : 'readonly,hideTables'
      const session = await login(user, { restrictions })
      const row = await db.from('api_sessions').orderBy('id', 'desc').first()
      const stored = JSON.parse(row.restrictions)
      assert.isTrue(stored.readonly)
      if (shape === 'list') assert.isTrue(stored.hideTables)
      else assert.equal(stored.carnet_code, 'notes')
      assert.isString(session.sesskey)
    })

  test('invalid restrictions JSON is INVALID_PARAMETER', async ({ assert }) => {
    const user = await makeUser()
    const app = await rpc({ req: 'createAppkey', appname: 'x' })
    const oauth = await rpc({
      req: 'createOauthkey',
      appkey: app.body.appkey,
      login: user.code,
      pwd: TEST_PASSWORD,
    })
    const answer = await rpc({
      req: 'createSesskey',
      o_u: user.code,
      oauthkey: oauth.body.oauthkey,
      restrictions: '{bad',
    })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'INVALID_PARAMETER' })
  })

  test('an invalid oauthkey, or the oauthkey of another user, is INVALID_OAUTHKEY', async ({
    assert,
  }) => {
    const alice = await makeUser()
    const bob = await makeUser()
    const app = await rpc({ req: 'createAppkey', appname: 'x' })
    const oauth = await rpc({
      req: 'createOauthkey',
      appkey: app.body.appkey,
      login: alice.code,
      pwd: TEST_PASSWORD,
    })

    const bogus = await rpc({ req: 'createSesskey', o_u: alice.code, oauthkey: 'ABCD-EFGH' })
    assert.deepInclude(bogus.body, { status: 'nok', errorCode: 'INVALID_OAUTHKEY' })
    assert.match(bogus.body.error, /^apiProcess\d+: invalid oauthkey or o_u/)

    const stolen = await rpc({ req: 'createSesskey', o_u: bob.code, oauthkey: oauth.body.oauthkey })
    assert.deepInclude(stolen.body, { status: 'nok', errorCode: 'INVALID_OAUTHKEY' })
  })
})

test.group('getUserInfo', () => {
  test('answers userInfo with the spec types', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    const answer = await rpc({
      req: 'getUserInfo',
      o_u: session.o_u,
      u_c: session.o_u,
      sesskey: session.sesskey,
    })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.isNumber(answer.body.sstamp)
    const info = answer.body.userInfo
    assert.isBoolean(info.firstTime)
    assert.isNumber(info.uimgStamp)
    assert.isNumber(info.sstamp)
    assert.isNumber(info.nbBooks)
    assert.equal(info.u_c, user.code)
    assert.isNumber(info.projectID)
    assert.isObject(info.rights)
    for (const value of Object.values(info.rights)) assert.isBoolean(value)
    assert.includeMembers(Object.keys(info.colors), [
      'defaut',
      'bleu-violet',
      'gray',
      'bleu-turquoise',
      'red',
      'green',
      'orange',
      'pink',
      'bleu-nuit',
      'noir',
      'rose-bois',
      'orange-pastel',
      'vert-pastel',
      'jaune-indien',
      'lilas',
    ])
    for (const value of Object.values(info.colors)) assert.match(value as string, /^#[0-9a-f]{6}$/i)
    const prefs = info.userPrefs
    assert.equal(prefs.mail1, user.email)
    assert.equal(prefs.fname, 'Test')
    assert.isString(prefs.lname)
    assert.isString(prefs.lang)
    assert.isBoolean(prefs.slashd)
    assert.isBoolean(prefs.openGrand)
    assert.isBoolean(prefs.syncWithStorage)
    assert.isNumber(prefs.nbCol)
    for (const key of [
      'mail1_toConfirm',
      'mob1',
      'sex',
      'country',
      'UCREATEDON',
      'tz',
      'lastConnection',
      'secondsSincePreviousConnection',
    ]) {
      assert.isString(prefs[key], key)
    }
  })

  test('firstTime is true on the first session only', async ({ assert }) => {
    const user = await makeUser()
    const first = await login(user)
    const one = await rpc({ req: 'getUserInfo', o_u: first.o_u, sesskey: first.sesskey })
    assert.isTrue(one.body.userInfo.firstTime)
    const second = await login(user)
    const two = await rpc({ req: 'getUserInfo', o_u: second.o_u, sesskey: second.sesskey })
    assert.isFalse(two.body.userInfo.firstTime)
    assert.match(two.body.userInfo.userPrefs.secondsSincePreviousConnection, /^\d+$/)
  })

  test('with sstamp, userInfo is answered only when it changed since', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    const full = await rpc({ req: 'getUserInfo', o_u: session.o_u, sesskey: session.sesskey })
    const stamp = full.body.sstamp
    assert.isAtLeast(stamp, full.body.userInfo.sstamp)

    const unchanged = await rpc({
      req: 'getUserInfo',
      o_u: session.o_u,
      sesskey: session.sesskey,
      sstamp: stamp,
    })
    assert.equal(unchanged.body.status, 'ok')
    assert.notProperty(unchanged.body, 'userInfo')
    assert.isAtLeast(unchanged.body.sstamp, stamp)

    const older = await rpc({
      req: 'getUserInfo',
      o_u: session.o_u,
      sesskey: session.sesskey,
      sstamp: full.body.userInfo.sstamp - 1,
    })
    assert.property(older.body, 'userInfo')

    // a new session changes lastConnection: userInfo comes back for the old stamp
    await login(user)
    const changed = await rpc({
      req: 'getUserInfo',
      o_u: session.o_u,
      sesskey: session.sesskey,
      sstamp: stamp,
    })
    assert.property(changed.body, 'userInfo')
  })

  test('an empty sstamp is the same as none', async ({ assert }) => {
    const session = await login(await makeUser())
    const answer = await rpc({
      req: 'getUserInfo',
      o_u: session.o_u,
      sesskey: session.sesskey,
      sstamp: '',
    })
    assert.property(answer.body, 'userInfo')
  })

  test('u_c may be the caller by code, e-mail or phone', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    for (const uc of [user.code, user.email!, user.phone!]) {
      const answer = await rpc({
        req: 'getUserInfo',
        o_u: session.o_u,
        u_c: uc,
        sesskey: session.sesskey,
      })
      assert.equal(answer.body.userInfo?.u_c, user.code, answer.text)
    }
  })

  test('missing {$self} is MISSING_PARAMETER')
    .with(['sesskey', 'o_u'])
    .run(async ({ assert }, missing) => {
      const session = await login(await makeUser())
      const params: Record<string, string> = {
        req: 'getUserInfo',
        o_u: session.o_u,
        sesskey: session.sesskey,
      }
      delete params[missing]
      const answer = await rpc(params)
      assert.deepInclude(answer.body, { status: 'nok', errorCode: 'MISSING_PARAMETER' })
      assert.include(answer.body.errorMsg, missing)
    })

  test('a bad sesskey is INVALID_SESSKEY', async ({ assert }) => {
    const session = await login(await makeUser())
    const answer = await rpc({ req: 'getUserInfo', o_u: session.o_u, sesskey: 'AAAA-BBBB-CCCC' })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'INVALID_SESSKEY' })
  })

  test('an o_u that is not the session user is USER_MISMATCH', async ({ assert }) => {
    const session = await login(await makeUser())
    const other = await makeUser()
    const answer = await rpc({ req: 'getUserInfo', o_u: other.code, sesskey: session.sesskey })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'USER_MISMATCH' })
  })

  test('acting on behalf of another user needs a delegation', async ({ assert }) => {
    const bot = await makeUser()
    const owner = await makeUser()
    const session = await login(bot)

    const denied = await rpc({
      req: 'getUserInfo',
      o_u: bot.code,
      u_c: owner.code,
      sesskey: session.sesskey,
    })
    assert.deepInclude(denied.body, { status: 'nok', errorCode: 'ON_BEHALF_DENIED' })

    const unknown = await rpc({
      req: 'getUserInfo',
      o_u: bot.code,
      u_c: 'no-such-user',
      sesskey: session.sesskey,
    })
    assert.deepInclude(unknown.body, { status: 'nok', errorCode: 'UNKNOWN_USER' })

    const { UserService } = await import('#core/services/user_service')
    const users = await application.container.make(UserService)
    await users.grantDelegation(owner.id, bot.id)
    const allowed = await rpc({
      req: 'getUserInfo',
      o_u: bot.code,
      u_c: owner.code,
      sesskey: session.sesskey,
    })
    assert.equal(allowed.body.status, 'ok', allowed.text)
    assert.equal(allowed.body.userInfo.u_c, owner.code)
  })

  test('an expired session is SESSION_EXPIRED', async ({ assert }) => {
    const session = await login(await makeUser())
    const { hashKey } = await import('#core/auth/keys')
    await db
      .from('api_sessions')
      .where('key_hash', hashKey(session.sesskey))
      .update({ expires_at: dbTimestamp(new Date(Date.now() - 60_000)) })
    const answer = await rpc({ req: 'getUserInfo', o_u: session.o_u, sesskey: session.sesskey })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'SESSION_EXPIRED' })
  })
})

test.group('dropAllSessions', () => {
  test('keeps the given session and drops every other session and oauthkey', async ({ assert }) => {
    const user = await makeUser()
    const keep = await login(user)
    const other = await login(user)
    const third = await login(user)

    const answer = await rpc({
      req: 'dropAllSessions',
      o_u: keep.o_u,
      u_c: keep.o_u,
      sesskey: keep.sesskey,
    })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.equal(answer.body.req, 'dropAllSessions')

    const kept = await rpc({ req: 'getUserInfo', o_u: keep.o_u, sesskey: keep.sesskey })
    assert.equal(kept.body.status, 'ok')
    for (const dropped of [other, third]) {
      const refused = await rpc({ req: 'getUserInfo', o_u: dropped.o_u, sesskey: dropped.sesskey })
      assert.deepInclude(refused.body, { status: 'nok', errorCode: 'INVALID_SESSKEY' })
      const noNewSession = await rpc({
        req: 'createSesskey',
        o_u: dropped.o_u,
        oauthkey: dropped.oauthkey,
      })
      assert.deepInclude(noNewSession.body, { status: 'nok', errorCode: 'INVALID_OAUTHKEY' })
    }
    // the kept session's own oauthkey still works
    const again = await rpc({ req: 'createSesskey', o_u: keep.o_u, oauthkey: keep.oauthkey })
    assert.equal(again.body.status, 'ok')
  })

  test('works by GET with only o_u and sesskey', async ({ assert }) => {
    const user = await makeUser()
    const keep = await login(user)
    const other = await login(user)
    const answer = await rpc(
      { req: 'dropAllSessions', o_u: keep.o_u, sesskey: keep.sesskey },
      'get'
    )
    assert.equal(answer.body.status, 'ok', answer.text)
    const refused = await rpc({ req: 'getUserInfo', o_u: other.o_u, sesskey: other.sesskey })
    assert.equal(refused.body.errorCode, 'INVALID_SESSKEY')
  })

  test('does not touch other users', async ({ assert }) => {
    const alice = await login(await makeUser())
    const bob = await login(await makeUser())
    await rpc({ req: 'dropAllSessions', o_u: alice.o_u, sesskey: alice.sesskey })
    const stillThere = await rpc({ req: 'getUserInfo', o_u: bob.o_u, sesskey: bob.sesskey })
    assert.equal(stillThere.body.status, 'ok')
  })

  test('a dropped sesskey cannot drop the others', async ({ assert }) => {
    const user = await makeUser()
    const keep = await login(user)
    const dropped = await login(user)
    await rpc({ req: 'dropAllSessions', o_u: keep.o_u, sesskey: keep.sesskey })
    const answer = await rpc({ req: 'dropAllSessions', o_u: dropped.o_u, sesskey: dropped.sesskey })
    assert.equal(answer.body.errorCode, 'INVALID_SESSKEY')
    const kept = await rpc({ req: 'getUserInfo', o_u: keep.o_u, sesskey: keep.sesskey })
    assert.equal(kept.body.status, 'ok')
  })
})

test.group('getOrCreateSessKey', () => {
  test('answers a valid sesskey back with u_c and sstamp', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    const answer = await rpc({
      req: 'getOrCreateSessKey',
      o_u: session.o_u,
      sesskey: session.sesskey,
    })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.equal(answer.body.sesskey, session.sesskey)
    assert.equal(answer.body.u_c, user.code)
    assert.isNumber(answer.body.sstamp)
  })

  test('creates a new session from the oauthkey when the sesskey is gone', async ({ assert }) => {
    const user = await makeUser()
    const keep = await login(user)
    const dropped = await login(user)
    await rpc({ req: 'dropAllSessions', o_u: dropped.o_u, sesskey: dropped.sesskey })
    const answer = await rpc({
      req: 'getOrCreateSessKey',
      o_u: keep.o_u,
      sesskey: keep.sesskey,
      oauthkey: dropped.oauthkey,
    })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.notEqual(answer.body.sesskey, keep.sesskey)
    const works = await rpc({ req: 'getUserInfo', o_u: user.code, sesskey: answer.body.sesskey })
    assert.equal(works.body.status, 'ok')
  })

  test('with neither a valid sesskey nor an oauthkey it is INVALID_SESSKEY', async ({ assert }) => {
    const user = await makeUser()
    const answer = await rpc({ req: 'getOrCreateSessKey', o_u: user.code, sesskey: 'AAAA-BBBB' })
    assert.deepInclude(answer.body, { status: 'nok', errorCode: 'INVALID_SESSKEY' })
  })
})
