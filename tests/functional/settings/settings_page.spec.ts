import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { ensureConsoleBuilt } from '#admin/build'
import settings from '#core/settings/main'
import { SETTINGS_TABLE } from '#core/settings/settings_service'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import webhooksConfig from '#plugins/webhooks/config'
import { ConsoleClient, pageOf, signedInAdmin } from '../admin/console_client.js'

/** One setting as the Settings page shows it. */
async function shownSetting(client: ConsoleClient, key: string) {
  const { props } = await pageOf(client, '/admin/settings')
  for (const owned of props.groups) {
    const found = owned.settings.find((setting: any) => setting.key === key)
    if (found) return { ...found, owner: owned.owner, errors: props.errors ?? {} }
  }
  throw new Error(`${key} is not on the Settings page`)
}

const storedRow = (key: string) => db.from(SETTINGS_TABLE).where('name', key).first()
/** Where a console visit sends the client (the sign-in page, when it is not allowed). */
const landing = (client: ConsoleClient, path: string) =>
  client.get(path).then((answer) => answer.location)

test.group('settings: the console page and the one update method', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => async () => {
    for (const key of ['core.adminTotpRequired', 'webhooks.timeoutMs', 'books.messagesDeltaMax'])
      await settings.update(key, null)
  })

  test('grouped by owner (Quire first, then each plugin), each with its value and source', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const page = await pageOf(client, '/admin/settings')
    assert.equal(page.component, 'settings')
    const owners = page.props.groups.map((owned: any) => owned.owner)
    assert.equal(owners[0], 'core')
    assert.lengthOf(owners, new Set(owners).size)
    assert.includeMembers(owners, ['books', 'gateways', 'webhooks', 'auth_service'])
    assert.equal(page.props.groups[0].title, 'Quire')
    const totp = await shownSetting(client, 'core.adminTotpRequired')
    assert.include(totp, {
      type: 'boolean',
      value: false,
      source: 'default',
      env: 'ADMIN_TOTP_REQUIRED',
      editable: true,
    })
    const timeout = await shownSetting(client, 'webhooks.timeoutMs')
    assert.include(timeout, { owner: 'webhooks', value: 10_000, min: 100, source: 'default' })
    assert.isTrue(page.props.nav.some((link: any) => link.href === '/admin/settings'))
  })

  test('a change applies at once without a restart, is stored and audited; reset goes back to the default', async ({
    assert,
  }) => {
    const { admin, client } = await signedInAdmin()
    // The kernel's 2FA policy: off by default outside production, so a password signs in.
    const saved = await client.post('/admin/settings/core.adminTotpRequired', { value: 'true' })
    assert.equal(saved.status, 302)
    assert.include(await shownSetting(client, 'core.adminTotpRequired'), {
      value: true,
      source: 'database',
    })
    const stored = await storedRow('core.adminTotpRequired')
    assert.equal(stored?.value_json, 'true')
    const other = await makeUser({ isAdmin: true })
    const signIn = await new ConsoleClient().signIn(other.email!, TEST_PASSWORD)
    // Required now: the password alone leads back to the sign-in page's enrolment step.
    assert.equal(signIn.location, '/admin/login')

    await client.post('/admin/settings/webhooks.timeoutMs', { value: '2500' })
    assert.equal(webhooksConfig.timeoutMs, 2500)
    const audited = await db
      .from('audit_log')
      .where('kind', 'setting.changed')
      .where('target_id', 'webhooks.timeoutMs')
      .orderBy('id', 'desc')
      .first()
    assert.equal(audited.actor_id, admin.id)
    assert.deepEqual(JSON.parse(audited.changes), { value: { from: 10_000, to: 2500 } })

    await client.post('/admin/settings/core.adminTotpRequired', { reset: true })
    assert.include(await shownSetting(client, 'core.adminTotpRequired'), {
      value: false,
      source: 'default',
    })
    assert.isNull(await storedRow('core.adminTotpRequired'))
    const again = await new ConsoleClient().signIn(other.email!, TEST_PASSWORD)
    assert.equal(again.location, '/admin')
  })

  test('a value out of bounds or of the wrong type is a form error and changes nothing', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    for (const [value, message] of [
      ['5', 'Enter 100 or more'],
      ['ten seconds', 'Enter a whole number'],
      ['150.5', 'Enter a whole number'],
      ['', 'Enter a value'],
    ]) {
      await client.post('/admin/settings/books.messagesDeltaMax', { value })
      const shown = await shownSetting(client, 'books.messagesDeltaMax')
      assert.equal(shown.errors['books.messagesDeltaMax'], message, value)
      assert.include(shown, { value: 5000, source: 'default' }, value)
    }
    await client.post('/admin/settings/core.adminTotpRequired', { value: 'maybe' })
    const totp = await shownSetting(client, 'core.adminTotpRequired')
    assert.equal(totp.errors['core.adminTotpRequired'], 'Choose on or off')
    assert.isNull(await storedRow('books.messagesDeltaMax'))
    assert.isNull(await storedRow('core.adminTotpRequired'))
    const unknown = await client.post('/admin/settings/core.noSuchThing', { value: '1' })
    assert.equal(unknown.status, 404)
  })

  test('a setting fixed by its environment variable is read-only and cannot be changed', async ({
    assert,
    cleanup,
  }) => {
    process.env.WEBHOOKS_TIMEOUT_MS = '4321'
    await settings.load()
    cleanup(async () => {
      delete process.env.WEBHOOKS_TIMEOUT_MS
      await settings.load()
    })
    const { client } = await signedInAdmin()
    assert.include(await shownSetting(client, 'webhooks.timeoutMs'), {
      value: 4321,
      source: 'env',
      editable: false,
    })
    await client.post('/admin/settings/webhooks.timeoutMs', { value: '2000' })
    const shown = await shownSetting(client, 'webhooks.timeoutMs')
    assert.equal(
      shown.errors['webhooks.timeoutMs'],
      'Set by the environment variable WEBHOOKS_TIMEOUT_MS: change it there and restart'
    )
    assert.equal(shown.value, 4321)
    assert.equal(webhooksConfig.timeoutMs, 4321)
    assert.isNull(await storedRow('webhooks.timeoutMs'))
  })

  test('only a signed-in administrator, with the CSRF token, reaches the page and the update', async ({
    assert,
  }) => {
    const anonymous = new ConsoleClient()
    assert.equal(await landing(anonymous, '/admin/settings'), '/admin/login')
    await anonymous.get('/admin/login')
    const refused = await anonymous.post('/admin/settings/webhooks.timeoutMs', { value: '2000' })
    assert.equal(refused.location, '/admin/login')

    const user = await makeUser()
    const notAdmin = new ConsoleClient()
    await notAdmin.signIn(user.email!, TEST_PASSWORD)
    assert.equal(await landing(notAdmin, '/admin/settings'), '/admin/login')

    const { client } = await signedInAdmin()
    const forged = await client.post(
      '/admin/settings/webhooks.timeoutMs',
      { value: '2000' },
      { csrf: false }
    )
    assert.notEqual(forged.status, 200)
    assert.isNull(await storedRow('webhooks.timeoutMs'))
    assert.equal(webhooksConfig.timeoutMs, 10_000)
  })
})

test.group('settings: the user page panels plugins contribute', () => {
  test('the auth service’s sign-in sessions are a panel: listed, searchable, and ended through it', async ({
    assert,
  }) => {
    const { admin, client } = await signedInAdmin()
    const { client: other } = await signedInAdmin()
    const page = await pageOf(other, `/admin/users/${admin.id}`)
    const panel = page.props.panels.find((entry: any) => entry.key === 'authSessions')
    assert.include(panel, { pluginId: 'auth_service', title: 'Sign-in sessions' })
    assert.equal(panel.rowAction.action, 'end')
    assert.equal(page.props.authSessions.total, 1)
    const [row] = page.props.authSessions.items
    assert.containsSubset(row.cells, { address: '127.0.0.1' })
    const unknown = await other.post(`/admin/users/${admin.id}/panels/authSessions/explode`, {
      id: row.id,
    })
    assert.equal(unknown.status, 404)
    await other.post(`/admin/users/${admin.id}/panels/authSessions/end`, { id: row.id })
    const after = await pageOf(other, `/admin/users/${admin.id}`)
    assert.equal(after.props.authSessions.total, 0)
    // That was the console session of `client`: it is signed out.
    assert.equal(await landing(client, '/admin'), '/admin/login')
  })
})
