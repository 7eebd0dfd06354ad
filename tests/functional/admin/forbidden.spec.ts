import { test } from '@japa/runner'
import User from '#models/user'
import { TEST_PASSWORD, makeUser } from '#tests/helpers/users'
import { ConsoleClient, signedInAdmin } from './console_client.js'

/**
 * Who may not see a console page: an administrator without the right a page needs gets the
 * "Not allowed" page (403) with the navigation of what they may use; anyone who is no longer an
 * administrator is signed out and sent to the sign-in, and no page or prop reaches them.
 */
test.group('console: pages an administrator may not see', () => {
  test('an administrator without the admin right: 403 "Not allowed", the navigation kept without the page', async ({
    assert,
  }) => {
    const { admin, client } = await signedInAdmin()
    // `admin` in the stored rights overrides is_admin for the pages that ask for it.
    admin.rights = { ...admin.rights, admin: false }
    await admin.save()
    const keys = new Set<string>()
    const refused = [
      '/admin/audit',
      '/admin/audit.csv',
      '/admin',
      '/admin/users',
      `/admin/users/${admin.id}`,
      '/admin/settings',
      '/admin/health',
      '/admin/plugins',
    ]
    for (const path of refused) {
      const answer = await client.get(path)
      assert.equal(answer.status, 403, path)
      assert.equal(answer.page?.component, 'forbidden', path)
      assert.equal(answer.page!.props.me.code, admin.code, path)
      const nav = answer.page!.props.nav as { label: string; source: string }[]
      const labels = nav.map((entry) => entry.label)
      assert.notInclude(labels, 'Audit log', path)
      assert.notInclude(labels, 'Users', path)
      // The plugins' pages (no right asked) are still offered.
      assert.isTrue(
        nav.some((entry) => entry.source === 'tables'),
        `${path}: ${labels}`
      )
      // Only what every page shares: nothing of the page refused.
      keys.add(Object.keys(answer.page!.props).sort().join(','))
    }
    assert.equal(keys.size, 1, [...keys].join(' | '))
    assert.notInclude([...keys][0], 'entries')
    // A full page load gets the same page in HTML, with no stack or error details.
    const html = await client.get('/admin/audit', { inertia: false })
    assert.equal(html.status, 403)
    assert.equal(html.page?.component, 'forbidden')
    assert.notInclude(html.text, 'at ')
    // A form sent anyway is refused before its handler: nothing is written.
    const count = async () => {
      const [row] = await User.query().count('* as n')
      return Number(row.$extras.n)
    }
    const users = await count()
    const created = await client.post('/admin/users', {
      code: 'sneaky',
      email: 'sneaky@example.test',
      password: 'Sneaky-password-1',
    })
    assert.equal(created.status, 403)
    assert.equal(await count(), users)
    // Pages that need no right still open: their own account, a plugin's pages.
    const account = await client.get('/admin/account')
    assert.equal(account.status, 200)
    assert.equal(account.page?.component, 'account')
    const tables = await client.get('/admin/tables')
    assert.equal(tables.status, 200)
    // Given the right back, the page opens again (the refusal was the right, nothing else).
    admin.rights = { ...admin.rights, admin: true }
    await admin.save()
    const audit = await client.get('/admin/audit')
    assert.equal(audit.status, 200)
    assert.equal(audit.page?.component, 'audit')
  })

  test('an account that is no longer an administrator is signed out and sent to the sign-in', async ({
    assert,
  }) => {
    const { admin, client } = await signedInAdmin()
    const before = await client.get('/admin/users')
    assert.equal(before.status, 200)
    await User.query().where('id', admin.id).update({ is_admin: false })
    for (const path of ['/admin/users', '/admin/audit', '/admin/no-such-page']) {
      const answer = await client.get(path)
      if (path === '/admin/no-such-page') {
        assert.equal(answer.status, 404, path)
      } else {
        assert.equal(answer.status, 303, path)
        assert.equal(answer.location, '/admin/login', path)
      }
      assert.isNull(answer.page, `${path}: no console page`)
    }
    // Signed out for good: an administrator again, the old session still opens nothing.
    await User.query().where('id', admin.id).update({ is_admin: true })
    const again = await client.get('/admin/users')
    assert.equal(again.status, 303)
    assert.equal(again.location, '/admin/login')
  })

  test('a user who is not an administrator cannot sign in to the console', async ({ assert }) => {
    const user = await makeUser()
    const client = new ConsoleClient()
    const answer = await client.signIn(user.email!, TEST_PASSWORD)
    assert.notEqual(answer.location, '/admin')
    const page = await client.get('/admin/users')
    assert.equal(page.status, 303)
    assert.equal(page.location, '/admin/login')
    assert.isNull(page.page)
  })
})
