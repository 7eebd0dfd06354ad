import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { ensureConsoleBuilt } from '#admin/build'
import { adminTotpRequired } from '#admin/console_settings'
import settings from '#core/settings/main'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'
import {
  authUsers,
  codeFor,
  enrol,
  post,
  resetAuthState,
} from '#plugins/auth_service/tests/helpers'
import { ConsoleClient, pageOf, signedInAdmin } from './console_client.js'

const RECOVERY = /^[a-z2-9]{5}-[a-z2-9]{5}$/

/** The props of a console page (an Inertia visit that must answer one). */
const propsOf = (client: ConsoleClient, path: string) =>
  pageOf(client, path).then((page) => page.props)
/** Where a console request sends the client. */
const locationOf = (answer: Promise<{ location: string | null }>) =>
  answer.then((value) => value.location)
/** The props of the sign-in page. */
const signInProps = (client: ConsoleClient) =>
  client.get('/admin/login').then((answer) => answer.page!.props)

async function createOauthkey(login: string, pwd: string) {
  const created = await rpc({ req: 'createAppkey', appname: 'two-factor-tests' })
  return rpc({ req: 'createOauthkey', appkey: created.body.appkey, login, pwd })
}

test.group('admin console: TOTP for administrators', (group) => {
  /** The console's requirement, changed like the Settings page does (a database override). */
  const requireTotp = async (required: boolean | null) => {
    await settings.update('core.adminTotpRequired', required)
  }
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(async () => {
    await resetAuthState()
    return () => requireTotp(null)
  })

  test('ADMIN_TOTP_REQUIRED: true in production by default, false elsewhere, the setting wins', ({
    assert,
  }) => {
    assert.isTrue(adminTotpRequired(undefined, 'production'))
    assert.isFalse(adminTotpRequired(undefined, 'development'))
    assert.isFalse(adminTotpRequired(undefined, 'test'))
    assert.isFalse(adminTotpRequired(false, 'production'))
    assert.isTrue(adminTotpRequired(true, 'development'))
  })

  test('required (production): a password alone is not enough; enrolment with a server-made QR, then ten recovery codes shown once', async ({
    assert,
  }) => {
    await requireTotp(true)
    // The global and per-user policies say optional: the console's requirement alone applies.
    const admin = await makeUser({ isAdmin: true })
    const client = new ConsoleClient()
    const first = await client.signIn(admin.email!, TEST_PASSWORD)
    assert.equal(first.location, '/admin/login')
    assert.equal(await locationOf(client.get('/admin')), '/admin/login')
    const props = await signInProps(client)
    assert.equal(props.step, 'setup')
    assert.match(props.setup.qr, /^data:image\/svg\+xml;base64,/)
    const svg = Buffer.from(props.setup.qr.split(',')[1], 'base64').toString('utf8')
    assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    assert.match(svg, /<path/)
    assert.match(props.setup.uri, /^otpauth:\/\/totp\//)

    const done = await client.post('/admin/login/code', {
      code: await codeFor(props.setup.secret),
    })
    assert.equal(done.location, '/admin/account')
    const account = await pageOf(client, '/admin/account')
    const codes: string[] = account.props.recoveryCodes
    assert.lengthOf(codes, 10)
    assert.lengthOf(new Set(codes), 10)
    for (const code of codes) assert.match(code, RECOVERY)
    assert.deepEqual(account.props.twoFactor, {
      enrolled: true,
      required: true,
      recoveryCodesLeft: 10,
    })
    // Shown once.
    const later = await propsOf(client, '/admin/account')
    assert.isNull(later.recoveryCodes)
    // Stored hashed: no row holds a code.
    const rows = await db.from('auth_recovery_codes').where('user_id', admin.id)
    assert.lengthOf(rows, 10)
    const stored = JSON.stringify(rows)
    for (const code of codes) {
      assert.notInclude(stored, code)
      assert.notInclude(stored, code.replace('-', ''))
    }
    const dashboard = await pageOf(client, '/admin')
    assert.isTrue(dashboard.props.security.totpEnrolled)
  })

  test('not required (development): the password signs in, and the dashboard warns', async ({
    assert,
  }) => {
    await requireTotp(false)
    const { client } = await signedInAdmin()
    const dashboard = await pageOf(client, '/admin')
    assert.isFalse(dashboard.props.security.totpEnrolled)
    const account = await pageOf(client, '/admin/account')
    assert.deepEqual(account.props.twoFactor, {
      enrolled: false,
      required: false,
      recoveryCodesLeft: 0,
    })
  })

  test('a recovery code signs in once in place of a TOTP code (console and {auth_url}); regenerating replaces them', async ({
    assert,
  }) => {
    const admin = await makeUser({ isAdmin: true })
    const { body } = await enrol(admin)
    const codes: string[] = body.recoveryCodes
    assert.lengthOf(codes, 10)

    const client = new ConsoleClient()
    await client.signIn(admin.email!, TEST_PASSWORD)
    const step = await signInProps(client)
    assert.equal(step.step, 'totp')
    // Typed as people do: upper case, a space instead of the dash.
    const typed = codes[0].toUpperCase().replace('-', ' ')
    assert.equal(await locationOf(client.post('/admin/login/code', { code: typed })), '/admin')

    const again = new ConsoleClient()
    await again.signIn(admin.email!, TEST_PASSWORD)
    const reused = await again.post('/admin/login/code', { code: codes[0] })
    assert.equal(reused.location, '/admin/login')
    const refusal = await signInProps(again)
    assert.equal(refusal.error, 'The code is wrong or was already used')

    const viaApi = async (code: string) => {
      const started = await post('/login', { login: admin.email, password: TEST_PASSWORD })
      return post('/login/2fa', { login_token: started.body.login_token, code })
    }
    const statusVia = (code: string) => viaApi(code).then((answer) => answer.status)
    assert.equal(await statusVia(codes[1]), 200)
    const replay = await viaApi(codes[1])
    assert.equal(replay.status, 401)
    assert.equal(replay.body.error, 'invalid_code')

    await client.post('/admin/account/recovery-codes')
    const account = await pageOf(client, '/admin/account')
    const fresh: string[] = account.props.recoveryCodes
    assert.lengthOf(fresh, 10)
    assert.equal(account.props.twoFactor.recoveryCodesLeft, 10)
    assert.equal(await statusVia(codes[2]), 401)
    assert.equal(await statusVia(fresh[0]), 200)

    // Resetting the second factor forgets the codes.
    await authUsers.resetTotp(admin)
    const left = await db.from('auth_recovery_codes').where('user_id', admin.id)
    assert.lengthOf(left, 0)
  })

  test('password sign-in on api.php turned off: createOauthkey answers PASSWORD_SIGN_IN_DISABLED; oauthkeys come from the console, shown once, revocable', async ({
    assert,
  }) => {
    const { admin, client } = await signedInAdmin()
    // Not without TOTP: the console would be the only way in, with a password alone.
    await client.post('/admin/account/api-password', { disabled: true })
    let account = await pageOf(client, '/admin/account')
    assert.isFalse(account.props.apiPasswordDisabled)
    assert.match(account.props.errors.apiPassword, /two-factor/)
    // Nor recovery codes: there is no second factor to recover.
    await client.post('/admin/account/recovery-codes')
    account = await pageOf(client, '/admin/account')
    assert.equal(account.props.errors.recovery, 'Set up two-factor authentication first')
    assert.isNull(account.props.recoveryCodes)
    assert.lengthOf(await db.from('auth_recovery_codes').where('user_id', admin.id), 0)

    // Enrolment from the Account page.
    await client.post('/admin/account/totp')
    account = await pageOf(client, '/admin/account')
    const { secret, qr } = account.props.enrolment
    assert.match(qr, /^data:image\/svg\+xml;base64,/)
    await client.post('/admin/account/totp/confirm', { code: '000000' })
    account = await pageOf(client, '/admin/account')
    assert.equal(account.props.errors.code, 'The code is wrong or was already used')
    assert.isFalse(account.props.twoFactor.enrolled)
    await client.post('/admin/account/totp/confirm', { code: await codeFor(secret) })
    account = await pageOf(client, '/admin/account')
    assert.lengthOf(account.props.recoveryCodes, 10)
    assert.isTrue(account.props.twoFactor.enrolled)
    assert.isNull(account.props.enrolment)

    await client.post('/admin/account/api-password', { disabled: true })
    const turnedOff = await propsOf(client, '/admin/account')
    assert.isTrue(turnedOff.apiPasswordDisabled)
    const refused = await createOauthkey(admin.email!, TEST_PASSWORD)
    assert.deepInclude(refused.body, { status: 'nok', errorCode: 'PASSWORD_SIGN_IN_DISABLED' })
    assert.match(refused.body.errorMsg, /admin console/)
    assert.equal(refused.contentType, 'application/json')
    // A wrong password learns nothing about the flag.
    const wrong = await createOauthkey(admin.email!, 'not the password')
    assert.equal(wrong.body.errorCode, 'INVALID_LOGIN')

    await client.post('/admin/account/oauthkeys', { application: 'my robot' })
    account = await pageOf(client, '/admin/account')
    const issued = account.props.newOauthkey
    assert.equal(issued.application, 'my robot')
    assert.equal(issued.o_u, admin.code)
    assert.isString(issued.oauthkey)
    const reread = await propsOf(client, '/admin/account')
    assert.isNull(reread.newOauthkey)
    assert.equal(account.props.oauthkeys.total, 1)
    assert.equal(account.props.oauthkeys.items[0].appName, 'my robot')
    const [row] = await db.from('oauth_keys').where('id', issued.id)
    assert.notInclude(JSON.stringify(row), issued.oauthkey)

    const session = await rpc({ req: 'createSesskey', o_u: admin.code, oauthkey: issued.oauthkey })
    assert.equal(session.body.status, 'ok', session.text)
    const call = () =>
      rpc({
        req: 'getUserInfo',
        o_u: admin.code,
        u_c: admin.code,
        sesskey: session.body.sesskey,
      }).then((answer) => answer.body)
    assert.equal(await call().then((body) => body.status), 'ok')

    // Someone else's key cannot be revoked from this account.
    const { client: other } = await signedInAdmin()
    await other.post(`/admin/account/oauthkeys/${issued.id}/revoke`)
    assert.equal(await call().then((body) => body.status), 'ok')
    const otherPage = await propsOf(other, '/admin/account')
    assert.equal(otherPage.notice, 'No such application key')

    await client.post(`/admin/account/oauthkeys/${issued.id}/revoke`)
    assert.equal(await call().then((body) => body.errorCode), 'INVALID_SESSKEY')
    const again = await rpc({ req: 'createSesskey', o_u: admin.code, oauthkey: issued.oauthkey })
    assert.equal(again.body.errorCode, 'INVALID_OAUTHKEY')
    const after = await propsOf(client, '/admin/account')
    assert.equal(after.oauthkeys.total, 0)
    assert.equal(after.notice, 'Application key revoked')

    await client.post('/admin/account/api-password', { disabled: false })
    const back = await createOauthkey(admin.email!, TEST_PASSWORD)
    assert.equal(back.body.status, 'ok')
  })
})
