import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { ensureConsoleBuilt } from '#admin/build'
import { PasswordPolicy, passwordPolicy } from '#core/services/password_policy'
import { UserService } from '#core/services/user_service'
import { AccessService } from '#core/services/access_service'
import { RpcError } from '#core/rpc/errors'
import { onMysql } from '#tests/helpers/database'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'
import { authUser, post, resetAuthState } from '#plugins/auth_service/tests/helpers'
import { pageOf, signedInAdmin } from '../admin/console_client.js'

const run = promisify(execFile)
const users = await app.container.make(UserService)

/** Longer than TEST_PASSWORD's 21 characters: the fixtures' password is too short under it. */
const MIN = 30
const SHORT = 'twenty-five characters !!'
const LONG_ENOUGH = 'a passphrase of thirty-two chars'

/** `node ace ...` in a child process with its own environment: the policy read from env there. */
const ace = (env: Record<string, string | undefined>, ...args: string[]) => {
  const merged: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...env }
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name]
  return run(process.execPath, ['ace', ...args], {
    cwd: app.makePath(),
    env: merged,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error) => ({ code: Number(error.code), output: `${error.stdout}${error.stderr}` })
  )
}

test.group('one password policy at every entry point (AUTH_PASSWORD_MIN_LENGTH)', (group) => {
  let saved: number
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(async () => {
    await resetAuthState()
    saved = passwordPolicy.rules.minLength
    return () => {
      passwordPolicy.rules.minLength = saved
    }
  })

  test('the console: create-user and reset-password forms', async ({ assert }) => {
    const { client } = await signedInAdmin()
    passwordPolicy.rules.minLength = MIN
    const code = `pp${Date.now().toString(36)}`
    await client.post('/admin/users', { code, password: SHORT })
    const refused = await pageOf(client, '/admin/users')
    assert.equal(refused.props.errors.password, `The password must have at least ${MIN} characters`)
    assert.isNull(await users.findByCode(code))

    const created = await client.post('/admin/users', { code, password: LONG_ENOUGH })
    const user = (await users.findByCode(code))!
    assert.equal(created.location, `/admin/users/${user.id}`)

    await client.post(`/admin/users/${user.id}/password`, { password: SHORT })
    const page = await pageOf(client, `/admin/users/${user.id}`)
    assert.match(page.props.errors.password, new RegExp(`at least ${MIN} characters`))
    assert.isTrue(await users.verifyPassword((await users.findById(user.id))!, LONG_ENOUGH))
  })

  test('the auth service: the forced change, and the policy it announces', async ({ assert }) => {
    const user = await authUser({ mustChangePassword: true })
    passwordPolicy.rules.minLength = MIN
    const first = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.equal(first.body.authenticationPolicies.password.minLength, MIN)
    const refused = await post('/password/change', {
      password_reset_token: first.body.passwordResetToken,
      password: SHORT,
    })
    assert.equal(refused.status, 422)
    assert.deepEqual(refused.body.errors.password, [
      `The password must have at least ${MIN} characters`,
    ])
    const changed = await post('/password/change', {
      password_reset_token: first.body.passwordResetToken,
      password: LONG_ENOUGH,
    })
    assert.equal(changed.status, 200, changed.text)
  })

  test('api.php createUserAccount and the user service itself', async ({ assert }) => {
    const access = await app.container.make(AccessService)
    const settings = (access as any).settings as { createUserAccount: boolean }
    const allowed = settings.createUserAccount
    settings.createUserAccount = true
    try {
      passwordPolicy.rules.minLength = MIN
      const created = await rpc({ req: 'createAppkey', appname: 'policy' })
      const login = `pp.${Date.now()}@example.test`
      const answer = await rpc({
        req: 'createOauthkey',
        appkey: created.body.appkey,
        login,
        pwd: SHORT,
        createUserAccount: 'true',
      })
      assert.deepInclude(answer.body, {
        status: 'nok',
        errorCode: 'INVALID_PARAMETER',
        field: 'pwd',
        errorMsg: `The password must have at least ${MIN} characters`,
      })
      assert.isNull(await users.findByLogin(login))
    } finally {
      settings.createUserAccount = allowed
    }
    await assert.rejects(
      () => users.create({ code: `pp${Date.now().toString(36)}`, password: SHORT }),
      RpcError
    )
    const user = await makeUser().catch((error) => error)
    assert.instanceOf(user, RpcError, 'the fixtures password is too short now')
  })

  test('node ace user:create reads the policy from the environment', async ({ assert }) => {
    const code = `ppace${Date.now().toString(36)}`
    const env = { AUTH_PASSWORD_MIN_LENGTH: String(MIN) }
    const refused = await ace(env, 'user:create', code, `${code}@example.test`, SHORT)
    assert.equal(refused.code, 1, refused.output)
    assert.include(refused.output, `The password must have at least ${MIN} characters`)
    assert.isNull(await users.findByCode(code))
    // The same command with a password long enough creates the user: the refusal was the policy's.
    const made = await ace(env, 'user:create', code, `${code}@example.test`, LONG_ENOUGH)
    assert.equal(made.code, 0, made.output)
    assert.isNotNull(await users.findByCode(code))
  }).timeout(120_000)

  test("quire:setup's demo administrator gets a password that meets the policy")
    .skip(onMysql(), 'runs quire:setup on a throwaway SQLite data folder')
    .run(async ({ assert, cleanup }) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'quire-policy-'))
      cleanup(() => rm(dataDir, { recursive: true, force: true }))
      const env = {
        AUTH_PASSWORD_MIN_LENGTH: '40',
        DATA_DIR: dataDir,
        DB_CONNECTION: 'sqlite',
        SQLITE_FILE: 'quire.sqlite',
        REDIS_HOST: undefined,
      }
      const setup = await ace(env, 'quire:setup')
      assert.equal(setup.code, 0, setup.output)
      const admin = JSON.parse(await readFile(join(dataDir, 'demo-admin.json'), 'utf8'))
      assert.isAtLeast(admin.password.length, 40)
      assert.include(setup.output, admin.password)
    })
    .timeout(180_000)
})

test.group('the password policy', () => {
  test('problems, assert and generate follow the rules', ({ assert }) => {
    const policy = new PasswordPolicy({ minLength: 12, maxLength: 20 })
    assert.deepEqual(policy.problems('a'.repeat(12)), [])
    assert.deepEqual(policy.problems('a'.repeat(11)), [
      'The password must have at least 12 characters',
    ])
    assert.deepEqual(policy.problems('a'.repeat(21)), [
      'The password must have at most 20 characters',
    ])
    assert.throws(() => policy.assert('short', 'pwd'), 'at least 12')
    assert.lengthOf(policy.generate(), 16)
    assert.lengthOf(new PasswordPolicy({ minLength: 40, maxLength: 128 }).generate(), 40)
    assert.notEqual(policy.generate(), policy.generate())
  })
})
