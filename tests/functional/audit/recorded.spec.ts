import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import ace from '@adonisjs/core/services/ace'
import { UserService } from '#core/services/user_service'
import { ensureConsoleBuilt } from '#admin/build'
import { rpc } from '#tests/helpers/rpc'
import { makeUser } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { book, client, share } from '#plugins/books/tests/helpers/books'
import webhooksConfig from '#plugins/webhooks/config'
import { parseRanges } from '#plugins/webhooks/lib/address_guard'
import { signedInAdmin, pageOf } from '../admin/console_client.js'
import { audit, entriesOn, lastOf, LOOPBACK } from './helpers.js'

const users = await app.container.make(UserService)

test.group('audit log: what each administrative change records', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('console: user created, edited, password reset, disabled, enabled, 2FA, delegation, sessions', async ({
    assert,
  }) => {
    const { admin, client: console } = await signedInAdmin()
    const code = `aud${Date.now().toString(36)}`
    const password = 'first secret password 1'
    await console.post('/admin/users', { code, email: `${code}@example.test`, password })
    const user = (await users.findByCode(code))!
    await console.post(`/admin/users/${user.id}`, { firstName: 'Ada', lastName: 'Lovelace' })
    const newPassword = 'second secret password 2'
    await console.post(`/admin/users/${user.id}/password`, { password: newPassword })
    await console.post(`/admin/users/${user.id}/disable`, { disabled: true })
    await console.post(`/admin/users/${user.id}/disable`, { disabled: false })
    await console.post(`/admin/users/${user.id}/two-factor`, { action: 'require' })
    await console.post(`/admin/users/${user.id}/two-factor`, { action: 'reset' })
    const delegate = await makeUser()
    for (const action of ['grant', 'revoke'])
      await console.post(`/admin/users/${user.id}/delegations`, { delegate: delegate.code, action })

    const application = await rpc({ req: 'createAppkey', appname: 'audit-tests' })
    const appkey = application.body.appkey
    const oauth = await rpc({ req: 'createOauthkey', appkey, login: code, pwd: newPassword })
    const sess = await rpc({ req: 'createSesskey', o_u: code, oauthkey: oauth.body.oauthkey })
    assert.equal(sess.body.status, 'ok')
    const shown = await pageOf(console, `/admin/users/${user.id}`)
    const sessionId = shown.props.sesskeys.items[0].id
    await console.post(`/admin/users/${user.id}/sessions/revoke`, {
      kind: 'sesskey',
      id: String(sessionId),
    })

    const entries = await entriesOn('user', user.id)
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      [
        'user.created',
        'user.updated',
        'user.password_reset',
        'user.disabled',
        'user.enabled',
        'user.two_factor_policy',
        'user.two_factor_reset',
        'delegation.granted',
        'delegation.revoked',
        'session.revoked',
      ]
    )
    for (const entry of entries) {
      assert.equal(entry.actorId, admin.id)
      assert.equal(entry.actorCode, admin.code)
      assert.match(entry.address, LOOPBACK)
      assert.equal(entry.label, code)
      // Never a password, a hash, a sesskey or an oauthkey.
      for (const secret of [password, newPassword, user.password, sess.body.sesskey])
        assert.notInclude(entry.raw, secret)
      assert.notInclude(entry.raw, oauth.body.oauthkey)
    }
    const [created, updated, reset] = entries
    assert.deepEqual(created.changes.code, { from: null, to: code })
    assert.deepEqual(updated.changes, {
      firstName: { from: '', to: 'Ada' },
      lastName: { from: '', to: 'Lovelace' },
    })
    assert.deepEqual(reset.changes, { password: { changed: true } })
    const [disabled] = await lastOf('user', user.id, 'user.disabled')
    assert.deepEqual(disabled.changes, { disabled: { from: false, to: true } })
    const [enabled] = await lastOf('user', user.id, 'user.enabled')
    assert.deepEqual(enabled.changes, { disabled: { from: true, to: false } })
    const [policy] = await lastOf('user', user.id, 'user.two_factor_policy')
    assert.deepEqual(policy.changes, { twoFactorPolicy: { from: 'default', to: 'required' } })
    const [twoFactor] = await lastOf('user', user.id, 'user.two_factor_reset')
    assert.deepEqual(twoFactor.changes, { twoFactor: { changed: true } })
    const [granted] = await lastOf('user', user.id, 'delegation.granted')
    assert.deepEqual(granted.changes, { actsOnBehalf: { from: null, to: delegate.code } })
    const [revoked] = await lastOf('user', user.id, 'delegation.revoked')
    assert.deepEqual(revoked.changes, { actsOnBehalf: { from: delegate.code, to: null } })
    const [session] = await lastOf('user', user.id, 'session.revoked')
    assert.deepEqual(session.changes, { apiSession: { from: sessionId, to: null } })
  })

  test('a refused or rolled-back change logs nothing', async ({ assert }) => {
    const { client: console } = await signedInAdmin()
    const taken = await makeUser()
    const before = await audit.search({ kind: 'user.created', page: 1, perPage: 1 })
    await console.post('/admin/users', { code: taken.code, password: 'another password 9' })
    const after = await audit.search({ kind: 'user.created', page: 1, perPage: 1 })
    assert.equal(after.total, before.total)

    const marker = `rollback${Date.now()}`
    await assert.rejects(() =>
      db.transaction(async (trx) => {
        await audit.record(
          {
            actor: { userId: null, code: 'system', address: 'system' },
            kind: 'test.rollback',
            target: { type: 'test', id: 1, label: marker },
          },
          trx
        )
        throw new Error('the change fails after its entry was written')
      })
    )
    const found = await audit.search({ text: marker, page: 1, perPage: 10 })
    assert.equal(found.total, 0)
  })

  test('api.php: book archived, member right changed, webhook created, changed, rotated, deleted', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    const member = await client()
    await share(owner, target, member, 2)
    const promoted = await owner.call({
      req: 'setMemberRight',
      ...target,
      member: member.code,
      right: 4,
    })
    assert.equal(promoted.status, 'ok')
    const archived = await owner.call({ req: 'archiveBook', ...target })
    assert.equal(archived.status, 'ok')
    const bookRow = await db.from('books').where('code', target.b_c).first()
    const bookEntries = await entriesOn('book', bookRow.id)
    assert.deepEqual(
      bookEntries.map((entry) => entry.kind),
      ['book.member_right_changed', 'book.archived']
    )
    for (const entry of bookEntries) {
      assert.equal(entry.actorId, owner.user.id)
      assert.match(entry.address, /\S/)
      assert.notInclude(['unknown', 'system', 'cli'], entry.address)
      assert.equal(entry.label, `${target.b_o}/${target.b_c}`)
    }
    assert.deepEqual(bookEntries[0].changes, {
      [`right of ${member.code}`]: { from: 'Read and write', to: 'Administer' },
    })
    assert.deepEqual(bookEntries[1].changes, { archived: { from: false, to: true } })
    const unarchived = await owner.call({ req: 'unarchiveBook', ...target })
    assert.equal(unarchived.status, 'ok')

    const saved = webhooksConfig.allowedRanges
    webhooksConfig.allowedRanges = parseRanges('127.0.0.0/8')
    try {
      const created = await owner.call({
        req: 'createWebhook',
        ...target,
        url: 'http://127.0.0.1:9/audit-hook',
        events: 'message.created',
      })
      assert.equal(created.status, 'ok', JSON.stringify(created))
      const id = created.webhook.id
      await owner.call({
        req: 'updateWebhook',
        webhookId: id,
        url: 'http://127.0.0.1:9/other',
        description: 'ops',
      })
      const rotated = await owner.call({ req: 'rotateWebhookSecret', webhookId: id })
      assert.equal(rotated.status, 'ok')
      await owner.call({ req: 'deleteWebhook', webhookId: id })
      const hooks = await entriesOn('webhook', id)
      assert.deepEqual(
        hooks.map((entry) => entry.kind),
        ['webhook.created', 'webhook.updated', 'webhook.secret_rotated', 'webhook.deleted']
      )
      assert.deepEqual(hooks[0].changes.secret, { changed: true })
      assert.deepEqual(hooks[1].changes, {
        url: { from: 'http://127.0.0.1:9/audit-hook', to: 'http://127.0.0.1:9/other' },
        description: { from: '', to: 'ops' },
      })
      assert.deepEqual(hooks[2].changes, { secret: { changed: true } })
      for (const entry of hooks) {
        assert.equal(entry.actorCode, owner.code)
        assert.notInclude(entry.raw, created.secret)
        assert.notInclude(entry.raw, rotated.secret)
      }
    } finally {
      webhooksConfig.allowedRanges = saved
    }
  })

  test('ace: user:create and user:delegate are recorded as the command, from cli', async ({
    assert,
  }) => {
    const code = `ace${Date.now().toString(36)}`
    const command = await ace.exec('user:create', [
      code,
      `${code}@example.test`,
      'ace password 12345',
    ])
    assert.equal(command.exitCode, 0)
    const user = (await users.findByCode(code))!
    const delegate = await makeUser()
    await ace.exec('user:delegate', [code, delegate.code])
    const entries = await entriesOn('user', user.id)
    assert.deepEqual(
      entries.map((entry) => [entry.kind, entry.actorId, entry.actorCode, entry.address]),
      [
        ['user.created', null, 'ace user:create', 'cli'],
        ['delegation.granted', null, 'ace user:delegate', 'cli'],
      ]
    )
    assert.notInclude(entries[0].raw, 'ace password 12345')
  })
})

test.group('audit log: books and gateways from the console', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('a book deleted and a gateway number allowed, by the signed-in administrator', async ({
    assert,
  }) => {
    const { admin, client: console } = await signedInAdmin()
    const owner = await client()
    const target = await book(owner)
    const bookRow = await db.from('books').where('code', target.b_c).first()
    await console.post(`/admin/books/${bookRow.id}/delete`, {})
    const [deleted] = await lastOf('book', bookRow.id, 'book.deleted')
    assert.equal(deleted.actorCode, admin.code)
    assert.match(deleted.address, LOOPBACK)
    assert.deepEqual(deleted.changes, { deleted: { from: false, to: true } })

    const other = await book(owner)
    const phone = `+3375${String(Date.now()).slice(-7)}`
    await console.post('/admin/gateways/sms/allow', { phone })
    await console.post('/admin/gateways/sms/allow', { phone, book: `${other.b_o}/${other.b_c}` })
    const allowed = await db
      .from('audit_log')
      .where('kind', 'gateway.allowed')
      .where('target_label', phone)
      .orderBy('id')
    assert.lengthOf(allowed, 2)
    assert.equal(allowed[0].actor_code, admin.code)
    assert.match(allowed[0].address, LOOPBACK)
    assert.deepEqual(JSON.parse(allowed[0].changes), {
      allowed: { from: false, to: true },
      book: { from: null, to: null },
    })
    assert.deepEqual(JSON.parse(allowed[1].changes), {
      allowed: { from: true, to: true },
      book: { from: null, to: `${other.b_o}/${other.b_c}` },
    })
  })
})

test.group('audit log: sign-in sessions ended from the user page', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('the auth service panel records session.revoked with the administrator who ended it', async ({
    assert,
  }) => {
    const { admin: signedIn } = await signedInAdmin()
    const { admin, client: other } = await signedInAdmin()
    const session = await db
      .from('auth_sessions')
      .where('user_id', signedIn.id)
      .whereNull('revoked_at')
      .first()
    const answer = await other.post(`/admin/users/${signedIn.id}/panels/authSessions/end`, {
      id: session.public_id,
    })
    assert.notEqual(answer.status, 404)
    const [ended] = await lastOf('user', signedIn.id, 'session.revoked')
    assert.equal(ended.actorCode, admin.code)
    assert.match(ended.address, LOOPBACK)
    assert.deepEqual(ended.changes, { signedInSession: { from: session.public_id, to: null } })
  })
})
