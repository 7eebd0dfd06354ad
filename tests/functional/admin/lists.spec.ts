import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { ensureConsoleBuilt } from '#admin/build'
import { makeUser, login } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'
import { UserService } from '#core/services/user_service'
import { SessionService } from '#plugins/auth_service/services/session_service'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { pageOf, signedInAdmin, type ConsoleClient } from './console_client.js'

const users = await app.container.make(UserService)
const authSessions = await app.container.make(SessionService)

/** A partial reload of some props of a page, as the page's pager and search box ask for them. */
const partial = (client: ConsoleClient, path: string, component: string, props: string[]) =>
  pageOf(client, path, { only: { component, props } })

/** The props of a page (an Inertia visit). */
async function propsOf(client: ConsoleClient, path: string) {
  const { props } = await pageOf(client, path)
  return props
}

/** One list of a page: its items, total, page, perPage and search. */
async function listOf(client: ConsoleClient, path: string, name: string) {
  const props = await propsOf(client, path)
  return props[name]
}

/** Query values that are not a page number, or are out of bounds: each answers the first page. */
const BAD_PAGES = ['0', '-3', 'abc', '2.5', '1e99', '99999999999', '%00', '']

test.group('admin console: lists paged and searched on the server', (group) => {
  group.setup(async () => {
    await ensureConsoleBuilt(app.makePath())
  })
  group.each.setup(() => resetAuthState())

  test('a book with 60 members: two pages with totals, a search narrows them, a partial reload reads members only', async ({
    assert,
  }) => {
    const { client, admin } = await signedInAdmin()
    const code = `mb${Date.now().toString(36)}`
    const created = await client.post('/admin/books', { code })
    const bookId = Number(/\/admin\/books\/(\d+)$/.exec(created.location ?? '')![1])
    const invited: string[] = []
    for (let index = 0; index < 59; index++) {
      const member = await makeUser()
      await client.post(`/admin/books/${bookId}/invite`, { login: member.code, right: 2 })
      invited.push(member.code)
    }
    const base = `/admin/books/${bookId}`

    const first = await listOf(client, base, 'members')
    assert.equal(first.total, 60)
    assert.equal(first.page, 1)
    assert.lengthOf(first.items, first.perPage)
    assert.equal(first.items[0].code, admin.code)
    const second = await listOf(client, `${base}?membersPage=2`, 'members')
    assert.equal(second.total, 60)
    assert.equal(second.page, 2)
    assert.lengthOf(second.items, first.perPage)
    const last = Math.ceil(60 / first.perPage)
    const end = await listOf(client, `${base}?membersPage=${last}`, 'members')
    assert.lengthOf(end.items, 60 - (last - 1) * first.perPage)
    assert.equal(end.items.at(-1).code, invited.at(-1))
    // Every member once over all pages.
    const seen = new Set<string>()
    for (let page = 1; page <= last; page++) {
      const { items } = await listOf(client, `${base}?membersPage=${page}`, 'members')
      for (const member of items) seen.add(member.code)
    }
    assert.equal(seen.size, 60)

    const one = invited[17]
    const searched = await listOf(client, `${base}?membersSearch=${one.toUpperCase()}`, 'members')
    assert.equal(searched.total, 1)
    assert.equal(searched.items[0].code, one)
    assert.equal(searched.search, one.toUpperCase())
    // A LIKE wildcard typed in the box is a character, not "anything".
    const wildcard = await listOf(client, `${base}?membersSearch=%25`, 'members')
    assert.equal(wildcard.total, 60)
    const none = await listOf(client, `${base}?membersSearch=nobody-at-all`, 'members')
    assert.equal(none.total, 0)
    assert.lengthOf(none.items, 0)

    // The members' pager asks for the members only: the messages are not read nor sent.
    const reloaded = await partial(client, `${base}?membersPage=2`, 'books/show', ['members'])
    assert.equal(reloaded.props.members.page, 2)
    assert.notProperty(reloaded.props, 'messages')
    assert.notProperty(reloaded.props, 'book')
    // The other list keeps its own parameters.
    const both = await propsOf(client, `${base}?membersPage=2&page=1&search=x`)
    assert.equal(both.members.page, 2)
    assert.equal(both.messages.search, 'x')
  })

  test('a user with 101 sesskeys: paged to the last one, searched by application', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const user = await makeUser()
    const session = await login(user, { appname: 'Bulk client' })
    for (let index = 0; index < 99; index++) {
      const made = await rpc({
        req: 'createSesskey',
        o_u: user.code,
        oauthkey: session.oauthkey,
      })
      assert.equal(made.body.status, 'ok', made.text)
    }
    await login(user, { appname: 'Lone kiosk' })
    const base = `/admin/users/${user.id}`

    const first = await listOf(client, base, 'sesskeys')
    assert.equal(first.total, 101)
    assert.lengthOf(first.items, first.perPage)
    const last = Math.ceil(101 / first.perPage)
    const end = await listOf(client, `${base}?sesskeysPage=${last}`, 'sesskeys')
    assert.equal(end.page, last)
    assert.lengthOf(end.items, 101 - (last - 1) * first.perPage)
    // Newest first: the last page ends with the very first sesskey.
    const [oldest] = await db
      .from('api_sessions')
      .where('user_id', user.id)
      .orderBy('id')
      .limit(1)
      .select('id')
    assert.equal(end.items.at(-1).id, Number(oldest.id))
    // Asked past the end, the last page answers.
    const past = await listOf(client, `${base}?sesskeysPage=${last + 5}`, 'sesskeys')
    assert.equal(past.page, last)

    const kiosk = await listOf(client, `${base}?sesskeysSearch=kiosk`, 'sesskeys')
    assert.equal(kiosk.total, 1)
    assert.equal(kiosk.items[0].appName, 'Lone kiosk')
    const byId = await listOf(client, `${base}?sesskeysSearch=${oldest.id}`, 'sesskeys')
    assert.isTrue(byId.items.some((item: any) => item.id === Number(oldest.id)))

    // A revoked sesskey leaves the list and its count.
    await client.post(`${base}/sessions/revoke`, { kind: 'sesskey', id: String(oldest.id) })
    const after = await partial(client, base, 'users/show', ['sesskeys'])
    assert.equal(after.props.sesskeys.total, 100)
    assert.notProperty(after.props, 'delegations')
    assert.notProperty(after.props, 'authSessions')
  })

  test('delegations and auth-service sessions: paged and searched, each with its own parameters', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const user = await makeUser()
    const delegates = []
    for (let index = 0; index < 23; index++) {
      const delegate = await makeUser()
      await users.grantDelegation(user.id, delegate.id)
      delegates.push(delegate)
    }
    // One the other way: the user acts for someone else.
    const principal = await makeUser()
    await users.grantDelegation(principal.id, user.id)
    for (let index = 0; index < 23; index++)
      await authSessions.open(user, String(user.id), {
        clientId: index === 7 ? 'reporting-tool' : `app-${index % 3}`,
        ip: `10.0.0.${index}`,
        userAgent: 'Console test',
      })
    const base = `/admin/users/${user.id}`

    const page = await propsOf(client, base)
    assert.equal(page.delegations.total, 24)
    assert.equal(page.authSessions.total, 23)
    assert.lengthOf(page.delegations.items, page.delegations.perPage)
    assert.lengthOf(page.authSessions.items, page.authSessions.perPage)

    const delegationsEnd = await propsOf(client, `${base}?delegationsPage=2`)
    assert.lengthOf(delegationsEnd.delegations.items, 24 - page.delegations.perPage)
    assert.equal(delegationsEnd.delegations.items.at(-1).userCode, principal.code)
    // The sessions stayed on their own first page.
    assert.equal(delegationsEnd.authSessions.page, 1)

    const sessionsEnd = await propsOf(client, `${base}?authSessionsPage=2&delegationsPage=2`)
    assert.equal(sessionsEnd.authSessions.page, 2)
    assert.lengthOf(sessionsEnd.authSessions.items, 23 - page.authSessions.perPage)
    assert.equal(sessionsEnd.delegations.page, 2)

    const one = delegates[11].code
    const found = await listOf(client, `${base}?delegationsSearch=${one}`, 'delegations')
    assert.equal(found.total, 1)
    assert.equal(found.items[0].delegateCode, one)
    const reporting = await listOf(client, `${base}?authSessionsSearch=REPORTING`, 'authSessions')
    assert.equal(reporting.total, 1)
    assert.equal(reporting.items[0].cells.client, 'reporting-tool')
    const byAddress = await listOf(client, `${base}?authSessionsSearch=10.0.0.2`, 'authSessions')
    // 10.0.0.2 and 10.0.0.20 to 10.0.0.22
    assert.equal(byAddress.total, 4)

    const only = await partial(client, `${base}?delegationsPage=2`, 'users/show', ['delegations'])
    assert.equal(only.props.delegations.page, 2)
    for (const other of ['sesskeys', 'authSessions', 'twoFactor', 'user'])
      assert.notProperty(only.props, other)
  })

  test('bad page and search values answer the first page, never an error', async ({ assert }) => {
    const { client, admin } = await signedInAdmin()
    const code = `bp${Date.now().toString(36)}`
    const created = await client.post('/admin/books', { code })
    const book = created.location!
    const user = `/admin/users/${admin.id}`
    for (const bad of BAD_PAGES) {
      const value = encodeURIComponent(bad)
      const members = await listOf(client, `${book}?membersPage=${value}`, 'members')
      assert.equal(members.page, 1, bad)
      assert.equal(members.total, 1, bad)
      const shown = await propsOf(
        client,
        `${user}?sesskeysPage=${value}&delegationsPage=${value}&authSessionsPage=${value}`
      )
      assert.equal(shown.sesskeys.page, 1, bad)
      assert.equal(shown.delegations.page, 1, bad)
      assert.equal(shown.authSessions.page, 1, bad)
      assert.equal(shown.authSessions.total, 1, bad)
      for (const [path, name] of [
        ['/admin/users', 'users'],
        ['/admin/books', 'books'],
        ['/admin/tables', 'books'],
      ]) {
        const list = await listOf(client, `${path}?page=${value}`, name)
        assert.equal(list.page, 1, `${path} ${bad}`)
      }
    }
    // Repeated parameters, and a search longer than allowed: defaults too.
    const twice = await listOf(client, `${book}?membersPage=2&membersPage=3`, 'members')
    assert.equal(twice.page, 1)
    const long = await listOf(client, `${book}?membersSearch=${'x'.repeat(500)}`, 'members')
    assert.equal(long.search, '')
    assert.equal(long.total, 1)
  })
})
