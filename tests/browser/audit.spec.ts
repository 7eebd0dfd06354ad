import { test } from '@japa/runner'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { hasChromium, noChromium, shot } from './chromium.js'
import { openPage, useConsoleBrowser } from './console_browser.js'
import { expectNoSeriousViolations } from './axe.js'

test.group('admin console in a browser: Audit log', (group) => {
  const browser = useConsoleBrowser(group)

  test('an administrator disables a user, then finds it in the audit log at both widths')
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })
      const user = await makeUser()
      const { context, page, errors } = await openPage(browser())
      try {
        await page.setViewportSize({ width: 1366, height: 900 })
        await page.goto(`${serverUrl()}/admin/login`)
        await page.fill('input[name=login]', admin.email!)
        await page.fill('input[name=password]', TEST_PASSWORD)
        await page.click('button[type=submit]')
        await page.waitForURL(`${serverUrl()}/admin`)

        // A change made in the console: the user is disabled on their page.
        await page.goto(`${serverUrl()}/admin/users/${user.id}`)
        await page.click('button:has-text("Disable account")')
        await page.click('button:has-text("Yes, disable account")')
        await page.waitForSelector('text=Account disabled')

        await page.click('nav >> text=Audit log')
        await page.waitForURL(`${serverUrl()}/admin/audit`)
        await page.fill('input[name=actor]', admin.code)
        await page.selectOption('select[name=kind]', 'user.disabled')
        await page.click('button:has-text("Apply")')
        await page.waitForURL(/kind=user.disabled/)
        const row = page.locator('tr[data-kind="user.disabled"]').first()
        await row.waitFor()
        const text = await row.innerText()
        assert.include(text, admin.code)
        assert.include(text, 'User disabled')
        assert.include(text, user.code)
        assert.include(text, 'Disabled: no → yes')
        assert.equal(await page.locator('tbody tr').count(), 1)
        await expectNoSeriousViolations(page, 'audit log')
        await shot(page, '30-audit')

        const href = await page.locator('a[data-csv]').getAttribute('href')
        assert.include(href!, 'kind=user.disabled')
        const csv = await page.request.get(`${serverUrl()}${href}`)
        assert.match(csv.headers()['content-type'], /^text\/csv/)
        assert.include(await csv.text(), `user.disabled`)

        await page.setViewportSize({ width: 390, height: 844 })
        await page.reload()
        await row.waitFor()
        await expectNoSeriousViolations(page, 'audit log on a phone')
        await shot(page, '31-audit-phone')
        assert.deepEqual(errors, [])
      } finally {
        await context.close()
      }
    })
})
