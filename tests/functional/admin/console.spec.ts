import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { ensureConsoleBuilt } from '#admin/build'
import { makeUser, login, TEST_PASSWORD } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'
import { UserService } from '#core/services/user_service'
import { authUsers, codeFor, nextStep, resetAuthState } from '#plugins/auth_service/tests/helpers'
import { ConsoleClient, pageOf, signedInAdmin } from './console_client.js'

const users = await app.container.make(UserService)

/** Every page of the console, core and contributed (ids filled once data exists). */
const PAGES = [
  '/admin',
  '/admin/users',
  '/admin/users/1',
  '/admin/plugins',
  '/admin/health',
  '/admin/settings',
  '/admin/audit',
  '/admin/books',
  '/admin/books/1',
  '/admin/tables',
  '/admin/tables/1',
  '/admin/gateways/sms',
  '/admin/gateways/sms/1',
  '/admin/gateways/devices',
  '/admin/gateways/deliveries',
  '/admin/gateways/deliveries/1',
  '/admin/gateways/mail',
]
const WRITES = [
  '/admin/settings/webhooks.timeoutMs',
  '/admin/health/jobs/1/retry',
  '/admin/users',
  '/admin/users/1',
  '/admin/users/1/password',
  '/admin/users/1/disable',
  '/admin/books',
  '/admin/books/1/delete',
  '/admin/gateways/sms/allow',
  '/admin/gateways/sms/1/unregister',
  '/admin/gateways/devices/1/deactivate',
  '/admin/gateways/deliveries/1/retry',
]

/** Where a GET of a console path sends the client (null when it answers in place). */
async function landing(client: ConsoleClient, path: string) {
  const answer = await client.get(path)
  return answer.location
}

/** The props of the sign-in page (step, error...). */
async function signInProps(client: ConsoleClient) {
  const answer = await client.get('/admin/login')
  return answer.page!.props
}

async function propsOf(client: ConsoleClient, path: string) {
  const page = await pageOf(client, path)
  return page.props
}

test.group('admin console: who gets in', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('a signed-out visitor gets no page and no prop, only the way to the sign-in', async ({
    assert,
  }) => {
    const visitor = new ConsoleClient()
    for (const path of PAGES) {
      for (const inertia of [true, false]) {
        const answer = await visitor.get(path, { inertia })
        assert.equal(answer.status, 303, path)
        assert.equal(answer.location, '/admin/login', path)
        assert.isNull(answer.page, path)
      }
    }
    const before = await db.from('users').count('* as total').first()
    await visitor.get('/admin/login')
    for (const path of WRITES) {
      const answer = await visitor.post(path, { code: 'intruder', password: 'whatever-1234' })
      assert.equal(answer.status, 303, path)
      assert.equal(answer.location, '/admin/login', path)
    }
    const after = await db.from('users').count('* as total').first()
    assert.equal(Number(after.total), Number(before.total))
  })

  test('a non-administrator with the right password gets nothing, and no session is left', async ({
    assert,
  }) => {
    const user = await makeUser()
    const client = new ConsoleClient()
    const answer = await client.signIn(user.email!, TEST_PASSWORD)
    assert.equal(answer.location, '/admin/login')
    const page = await client.get('/admin/login')
    assert.equal(page.page!.props.error, 'This account may not use the console')
    for (const path of PAGES) {
      const visit = await client.get(path)
      assert.equal(visit.status, 303, path)
      assert.isNull(visit.page, path)
    }
    const open = await db.from('auth_sessions').where('user_id', user.id).whereNull('revoked_at')
    assert.lengthOf(open, 0)
  })

  test('a wrong password is refused with the one message, and counts in the shared throttle', async ({
    assert,
  }) => {
    const admin = await makeUser({ isAdmin: true })
    const client = new ConsoleClient()
    await client.signIn(admin.email!, 'wrong password')
    const page = await client.get('/admin/login')
    assert.equal(page.page!.props.error, 'Invalid login or password')
    assert.equal(page.page!.props.step, 'password')
    // createOauthkey and the console share CredentialService's counters: exhaust them on api.php.
    const created = await rpc({ req: 'createAppkey', appname: 'console-tests' })
    const appkey = created.body.appkey
    for (let attempt = 0; attempt < 12; attempt++)
      await rpc({ req: 'createOauthkey', appkey, login: admin.email, pwd: 'nope' })
    await client.signIn(admin.email!, TEST_PASSWORD)
    const throttled = await client.get('/admin/login')
    assert.match(throttled.page!.props.error, /Too many failed sign-in attempts/)
  })

  test('without the CSRF token a sign-in is refused', async ({ assert }) => {
    const admin = await makeUser({ isAdmin: true })
    const client = new ConsoleClient()
    await client.get('/admin/login')
    const answer = await client.post(
      '/admin/login',
      { login: admin.email, password: TEST_PASSWORD },
      { csrf: false }
    )
    assert.notEqual(answer.location, '/admin')
    assert.isAtLeast(answer.status, 300)
    assert.notMatch(answer.text, /node_modules|\.ts:\d+/)
    assert.equal(await landing(client, '/admin'), '/admin/login')
  })

  test('TOTP: enrolment when the policy requires it, then a code at every sign-in', async ({
    assert,
  }) => {
    const admin = await makeUser({ isAdmin: true })
    await authUsers.setPolicy(admin, 'required')
    const client = new ConsoleClient()
    const first = await client.signIn(admin.email!, TEST_PASSWORD)
    assert.equal(first.location, '/admin/login')
    const setup = await signInProps(client)
    assert.equal(setup.step, 'setup')
    assert.match(setup.setup.secret, /^[A-Z2-7]+$/)
    // Not signed in before the code.
    assert.equal(await landing(client, '/admin'), '/admin/login')
    const wrong = await client.post('/admin/login/code', { code: '000000' })
    assert.equal(wrong.location, '/admin/login')
    const pending = await signInProps(client)
    assert.equal(pending.step, 'setup')
    const done = await client.post('/admin/login/code', { code: await codeFor(setup.setup.secret) })
    // The Account page first, showing the new recovery codes once.
    assert.equal(done.location, '/admin/account')
    const account = await pageOf(client, '/admin/account')
    assert.lengthOf(account.props.recoveryCodes, 10)
    const dashboard = await pageOf(client, '/admin')
    assert.equal(dashboard.component, 'dashboard')

    nextStep()
    const again = new ConsoleClient()
    await again.signIn(admin.email!, TEST_PASSWORD)
    const second = await signInProps(again)
    assert.equal(second.step, 'totp')
    const code = await again.post('/admin/login/code', {
      code: await codeFor(setup.setup.secret),
    })
    assert.equal(code.location, '/admin')
  })

  test('sign-out ends the console session and its auth-service session', async ({ assert }) => {
    const { admin, client } = await signedInAdmin()
    const open = () => db.from('auth_sessions').where('user_id', admin.id).whereNull('revoked_at')
    assert.lengthOf(await open(), 1)
    const out = await client.post('/admin/logout')
    assert.equal(out.location, '/admin/login')
    assert.lengthOf(await open(), 0)
    assert.equal(await landing(client, '/admin'), '/admin/login')
  })

  test('revoking the console session elsewhere (Users page) signs the console out', async ({
    assert,
  }) => {
    const { admin, client } = await signedInAdmin()
    const { client: other } = await signedInAdmin()
    const [session] = await db
      .from('auth_sessions')
      .where('user_id', admin.id)
      .whereNull('revoked_at')
    // The auth service's panel on the user page (manifest admin.userPanels) ends it.
    await other.post(`/admin/users/${admin.id}/panels/authSessions/end`, { id: session.public_id })
    assert.equal(await landing(client, '/admin'), '/admin/login')
  })

  test('an administrator demoted while signed in is sent away', async ({ assert }) => {
    const { admin, client } = await signedInAdmin()
    await users.update(admin, { isAdmin: false })
    assert.equal(await landing(client, '/admin/users'), '/admin/login')
  })
})

test.group('admin console: pages and their props', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('the full page is HTML with the built assets and no external resource', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const answer = await client.get('/admin', { inertia: false })
    assert.equal(answer.status, 200)
    assert.match(answer.text, /<script type="module" src="\/admin\/assets\/[^"]+\.js"/)
    assert.notMatch(answer.text, /https?:\/\//)
    assert.equal(answer.page!.component, 'dashboard')
    const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(answer.text)![1]
    const asset = await client.get(script, { inertia: false })
    assert.equal(asset.status, 200)
    const escape = await client.get('/admin/assets/../../package.json', { inertia: false })
    assert.equal(escape.status, 404)
  })

  test('dashboard: figures, queue, charts of the last 24 hours and activity from every part', async ({
    assert,
  }) => {
    const { client, admin } = await signedInAdmin()
    const page = await pageOf(client, '/admin')
    const { figures, queue, charts, activity, nav, me } = page.props
    assert.equal(me.code, admin.code)
    // The kernel's figures, then each plugin's (its manifest's admin.dashboard), in plugin order.
    assert.deepEqual(
      figures.map((figure: any) => figure.key),
      ['users', 'sesskeys', 'books', 'messages', 'tables', 'rows', 'authSessions']
    )
    for (const figure of figures) assert.isNumber(figure.value, figure.key)
    assert.isAtLeast(figures.find((figure: any) => figure.key === 'users').value, 1)
    assert.isTrue(queue.ok)
    assert.deepEqual(
      charts.map((chart: any) => chart.key),
      ['messages', 'rowWrites']
    )
    for (const chart of charts) {
      assert.lengthOf(chart.hours, 24)
      assert.lengthOf(chart.counts, 24)
    }
    assert.isArray(activity)
    assert.include(
      activity.map((line: any) => line.actor),
      admin.code
    )
    assert.deepEqual(
      nav.map((entry: any) => entry.href),
      [
        '/admin',
        '/admin/users',
        '/admin/books',
        '/admin/tables',
        '/admin/gateways/sms',
        '/admin/gateways/devices',
        '/admin/gateways/deliveries',
        '/admin/gateways/mail',
        '/admin/webhooks',
        '/admin/audit',
        '/admin/health',
        '/admin/settings',
        '/admin/plugins',
      ]
    )
    assert.equal(nav.find((entry: any) => entry.href === '/admin/books').source, 'books')
  })

  test('the dashboard counts rows across tables in one statement, kept a while', async ({
    assert,
  }) => {
    const { client, admin } = await signedInAdmin()
    const session = await login(admin)
    const call = (params: Record<string, unknown>) =>
      rpc({ o_u: admin.code, u_c: admin.code, sesskey: session.sesskey, ...params })
    const rowsOf = async () => {
      const props = await propsOf(client, '/admin')
      return props.figures.find((figure: any) => figure.key === 'rows').value
    }
    await call({ req: 'createBook', b_c: 'dashrows' })
    const before = await rowsOf()
    const created = await call({ req: 'createTable', b_o: admin.code, b_c: 'dashrows', name: 'T' })
    assert.equal(created.body.status, 'ok', created.text)
    const added = await call({
      req: 'createOrUpdateTableRows',
      catId: created.body.catId,
      rows: JSON.stringify({ tmp0: {}, tmp1: {}, tmp2: {} }),
    })
    assert.equal(added.body.status, 'ok', added.text)
    // Within the cache's 30 s the figure is the one already counted; a fresh part counts anew.
    assert.equal(await rowsOf(), before)
    const { default: TablesDashboard } = await import('#plugins/tables/admin/dashboard')
    const fresh = await app.container.make(TablesDashboard)
    const [, rows] = await fresh.figures()
    assert.equal(rows.value, before + 3)
  })

  test('dashboard counts follow a message sent through api.php', async ({ assert }) => {
    const { client, admin } = await signedInAdmin()
    const session = await login(admin)
    await rpc({
      req: 'createBook',
      o_u: admin.code,
      u_c: admin.code,
      sesskey: session.sesskey,
      b_c: 'dash',
    })
    const before = await propsOf(client, '/admin')
    const sent = await rpc({
      req: 'sendMsg',
      o_u: admin.code,
      u_c: admin.code,
      sesskey: session.sesskey,
      b_o: admin.code,
      b_c: 'dash',
      msg: 'hello dashboard',
      uuid: `dash-${Date.now()}`,
    })
    assert.equal(sent.body.status, 'ok', sent.text)
    const after = await propsOf(client, '/admin')
    const messages = (props: any) => props.figures.find((f: any) => f.key === 'messages').value
    const lastHour = (props: any) =>
      props.charts.find((chart: any) => chart.key === 'messages').counts.at(-1)
    assert.equal(messages(after), messages(before) + 1)
    assert.equal(lastHour(after), lastHour(before) + 1)
    assert.equal(after.activity[0].text, 'in dash: hello dashboard')
    assert.equal(after.activity[0].actor, admin.code)
  })

  test('users: search and paging on the server; one user with sessions and 2FA state', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const target = await makeUser()
    const session = await login(target)
    const found = await pageOf(client, `/admin/users?search=${target.code}`)
    assert.equal(found.props.users.total, 1)
    assert.equal(found.props.users.items[0].code, target.code)
    assert.notProperty(found.props.users.items[0], 'password')
    const all = await pageOf(client, '/admin/users?page=1')
    assert.equal(all.props.users.perPage, 25)
    assert.isAtLeast(all.props.users.total, 3)
    const show = await pageOf(client, `/admin/users/${target.id}`)
    assert.equal(show.component, 'users/show')
    assert.lengthOf(show.props.sesskeys.items, 1)
    assert.isFalse(show.props.twoFactor.enrolled)
    const missing = await client.get('/admin/users/999999')
    assert.equal(missing.status, 404)
    assert.ok(session.sesskey)
  })

  test('users: create, edit, reset password, disable, 2FA, delegation, revoke a sesskey', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const code = `made${Date.now().toString(36)}`
    const created = await client.post('/admin/users', {
      code,
      email: `${code}@example.test`,
      password: 'first password 1',
    })
    const user = (await users.findByCode(code))!
    assert.equal(created.location, `/admin/users/${user.id}`)

    const taken = await client.post('/admin/users', { code, password: 'another password' })
    assert.notEqual(taken.location, '/admin/users/')
    const { errors } = await propsOf(client, '/admin/users')
    assert.match(errors.form, /already exists/)

    await client.post(`/admin/users/${user.id}`, { firstName: 'Ada', lastName: 'Lovelace' })
    assert.equal((await users.findById(user.id))!.firstName, 'Ada')

    await client.post(`/admin/users/${user.id}/password`, { password: 'second password 2' })
    const application = await rpc({ req: 'createAppkey', appname: 'console-tests' })
    const appkey = application.body.appkey
    const oauth = await rpc({
      req: 'createOauthkey',
      appkey,
      login: code,
      pwd: 'second password 2',
    })
    assert.equal(oauth.body.status, 'ok')
    const sess = await rpc({ req: 'createSesskey', o_u: code, oauthkey: oauth.body.oauthkey })
    assert.equal(sess.body.status, 'ok')

    const shown = await propsOf(client, `/admin/users/${user.id}`)
    const [sesskey] = shown.sesskeys.items
    await client.post(`/admin/users/${user.id}/sessions/revoke`, {
      kind: 'sesskey',
      id: String(sesskey.id),
    })
    const revoked = await rpc({
      req: 'getUserInfo',
      o_u: code,
      u_c: code,
      sesskey: sess.body.sesskey,
    })
    assert.equal(revoked.body.errorCode, 'INVALID_SESSKEY')

    await client.post(`/admin/users/${user.id}/two-factor`, { action: 'require' })
    assert.equal((await authUsers.find(user.id))!.totp_policy, 'required')

    const delegate = await makeUser()
    await client.post(`/admin/users/${user.id}/delegations`, {
      delegate: delegate.code,
      action: 'grant',
    })
    assert.isTrue(await users.canActOnBehalf(delegate.id, user.id))
    await client.post(`/admin/users/${user.id}/delegations`, {
      delegate: delegate.code,
      action: 'revoke',
    })
    assert.isFalse(await users.canActOnBehalf(delegate.id, user.id))

    await client.post(`/admin/users/${user.id}/disable`, { disabled: true })
    const refused = await rpc({
      req: 'createOauthkey',
      appkey,
      login: code,
      pwd: 'second password 2',
    })
    assert.equal(refused.body.status, 'nok')
    await client.post(`/admin/users/${user.id}/disable`, { disabled: false })
    const again = await rpc({
      req: 'createOauthkey',
      appkey,
      login: code,
      pwd: 'second password 2',
    })
    assert.equal(again.body.status, 'ok')
  })

  test('plugins: what plugin:list shows', async ({ assert }) => {
    const { client } = await signedInAdmin()
    const { plugins } = await propsOf(client, '/admin/plugins')
    const ids = plugins.map((plugin: any) => plugin.id)
    assert.includeMembers(ids, ['books', 'tables', 'auth_service'])
    const books = plugins.find((plugin: any) => plugin.id === 'books')
    assert.include(books.operations, 'sendMsg')
    assert.include(books.socketTypes, '1')
    assert.match(books.version, /^\d+\.\d+\.\d+/)
    assert.deepEqual(books.consolePages, [{ label: 'Books', href: '/admin/books' }])
    const tables = plugins.find((plugin: any) => plugin.id === 'tables')
    assert.include(tables.jobs, 'tables.recompute')
    const auth = plugins.find((plugin: any) => plugin.id === 'auth_service')
    assert.isTrue(auth.routes.some((route: string) => route.includes('/auth/login')))
  })

  test('books: create, search, invite, change a right, archive, message browser, delete', async ({
    assert,
  }) => {
    const { client, admin } = await signedInAdmin()
    const member = await makeUser()
    const code = `cb${Date.now().toString(36)}`
    const created = await client.post('/admin/books', { code, title: 'Console book' })
    const [book] = await db.from('books').where('code', code).where('owner_id', admin.id)
    assert.equal(created.location, `/admin/books/${book.id}`)

    const list = await pageOf(client, `/admin/books?search=${code}`)
    assert.equal(list.props.books.total, 1)
    assert.equal(list.props.books.items[0].title, 'Console book')

    await client.post(`/admin/books/${book.id}/invite`, { login: member.email, right: 2 })
    let show = await propsOf(client, `/admin/books/${book.id}`)
    const invited = show.members.items.find((entry: any) => entry.code === member.code)
    assert.equal(invited.invite, 'sent')
    assert.equal(invited.right, 2)
    // The member sees the invitation through api.php.
    const memberSession = await login(member)
    const books = await rpc({
      req: 'getAllBooks',
      o_u: member.code,
      u_c: member.code,
      sesskey: memberSession.sesskey,
    })
    assert.isTrue(JSON.stringify(books.body).includes(code))

    await client.post(`/admin/books/${book.id}/members/${member.id}/right`, { right: 3 })
    show = await propsOf(client, `/admin/books/${book.id}`)
    assert.equal(show.members.items.find((entry: any) => entry.code === member.code).right, 3)

    await client.post(`/admin/books/${book.id}/archive`, { archived: true })
    const archived = await propsOf(client, `/admin/books/${book.id}`)
    assert.isTrue(archived.book.archived)
    await client.post(`/admin/books/${book.id}/archive`, { archived: false })

    const ownerSession = await login(admin)
    for (let index = 0; index < 25; index++) {
      await rpc({
        req: 'sendMsg',
        o_u: admin.code,
        u_c: admin.code,
        sesskey: ownerSession.sesskey,
        b_o: admin.code,
        b_c: code,
        msg: `message ${index}`,
        uuid: `${code}-${index}`,
      })
    }
    const firstPage = await propsOf(client, `/admin/books/${book.id}`)
    assert.lengthOf(firstPage.messages.items, 20)
    assert.equal(firstPage.messages.items[0].msg, 'message 24')
    assert.equal(firstPage.messages.total, 25)
    const second = await propsOf(client, `/admin/books/${book.id}?page=2`)
    assert.lengthOf(second.messages.items, 5)
    assert.equal(second.messages.page, 2)
    // Past the last page: the last page.
    const beyond = await propsOf(client, `/admin/books/${book.id}?page=9`)
    assert.equal(beyond.messages.page, 2)
    assert.lengthOf(beyond.messages.items, 5)
    const searched = await propsOf(client, `/admin/books/${book.id}?search=message%201`)
    assert.isTrue(
      searched.messages.items.every((message: any) => message.msg.startsWith('message 1'))
    )
    // message 1 and message 10 to 19.
    assert.equal(searched.messages.total, 11)

    const deleted = await client.post(`/admin/books/${book.id}/delete`)
    assert.equal(deleted.location, '/admin/books')
    const removed = await client.get(`/admin/books/${book.id}`)
    assert.equal(removed.status, 404)
    const gone = await rpc({
      req: 'getBookInfo',
      o_u: member.code,
      u_c: member.code,
      sesskey: memberSession.sesskey,
      b_o: admin.code,
      b_c: code,
    })
    assert.equal(gone.body.status, 'nok')
  })

  test('tables: per book the tables, and a grid paged on the server', async ({ assert }) => {
    const { client, admin } = await signedInAdmin()
    const session = await login(admin)
    const call = (params: Record<string, unknown>) =>
      rpc({ o_u: admin.code, u_c: admin.code, sesskey: session.sesskey, ...params })
    const code = `tb${Date.now().toString(36)}`
    await call({ req: 'createBook', b_c: code })
    const table = await call({ req: 'createTable', b_o: admin.code, b_c: code, name: 'Inventory' })
    assert.equal(table.body.status, 'ok', table.text)
    const catId = Number(table.body.catId)
    const field = await call({
      req: 'createField',
      b_o: admin.code,
      catId,
      name: 'Label',
      type: 'shorttext',
    })
    assert.equal(field.body.status, 'ok', field.text)
    const rows = Object.fromEntries(
      Array.from({ length: 60 }, (_, index) => [
        `tmp${index}`,
        { [field.body.fieldId]: `item ${index}` },
      ])
    )
    const written = await call({
      req: 'createOrUpdateTableRows',
      b_o: admin.code,
      rows: JSON.stringify(rows),
    })
    assert.equal(written.body.status, 'ok', written.text)

    const index = await propsOf(client, `/admin/tables?search=${code}`)
    assert.equal(index.books.total, 1)
    const listed = index.books.items[0].tables.find((entry: any) => entry.id === catId)
    assert.equal(listed.rows, 60)
    assert.isAtLeast(listed.fields, 1)

    const first = await propsOf(client, `/admin/tables/${catId}`)
    assert.equal(first.rows.total, 60)
    assert.lengthOf(first.rows.items, 50)
    const label = first.fields.findIndex((entry: any) => entry.name === 'Label')
    assert.equal(first.rows.items[0].cells[label], 'item 0')
    const second = await propsOf(client, `/admin/tables/${catId}?page=2`)
    assert.lengthOf(second.rows.items, 10)
    assert.equal(second.rows.items[9].cells[label], 'item 59')
  })
})
