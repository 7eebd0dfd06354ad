import { test } from '@japa/runner'
import settings from '#core/settings/main'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { hasChromium, noChromium, shot } from './chromium.js'
import { openPage, useConsoleBrowser } from './console_browser.js'
import { expectNoSeriousViolations } from './axe.js'

test.group('admin console in a browser: Settings page and user panels', (group) => {
  const browser = useConsoleBrowser(group)
  group.each.setup(() => async () => {
    await settings.update('webhooks.timeoutMs', null)
  })

  test(
    'an administrator reads and changes settings at 1366 and 390 px; the user page shows the sign-in sessions panel'
  )
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })
      const { context, page, errors } = await openPage(browser())
      try {
        await page.setViewportSize({ width: 1366, height: 900 })
        await page.goto(`${serverUrl()}/admin/login`)
        await page.fill('input[name=login]', admin.email!)
        await page.fill('input[name=password]', TEST_PASSWORD)
        await page.click('button[type=submit]')
        await page.waitForURL(`${serverUrl()}/admin`)
        await page.click('nav >> text=Settings')
        await page.waitForURL(`${serverUrl()}/admin/settings`)
        await page.waitForSelector('h1:has-text("Settings")')
        for (const title of ['Quire', 'Books', 'Gateways', 'Webhooks', 'Auth service'])
          await page.waitForSelector(`h2:text-is("${title}")`)
        const totp = page.locator('[data-setting="core.adminTotpRequired"]')
        assert.include(await totp.innerText(), 'Two-factor sign-in required for administrators')
        assert.include(await totp.innerText(), 'Off · Default')

        // A value out of bounds: refused in plain words, nothing changes.
        const timeout = page.locator('[data-setting="webhooks.timeoutMs"]')
        await timeout.locator('input[name=value]').fill('5')
        await timeout.locator('button:has-text("Save")').click()
        await timeout.locator('.error:has-text("Enter 100 or more")').waitFor()
        assert.equal(settings.integer('webhooks.timeoutMs'), 10_000)

        await timeout.locator('input[name=value]').fill('2500')
        await timeout.locator('button:has-text("Save")').click()
        await page.waitForSelector('text=Delivery timeout: saved (2500)')
        await timeout.locator('[data-source-text]:has-text("Changed here")').waitFor()
        assert.equal(settings.integer('webhooks.timeoutMs'), 2500)
        await expectNoSeriousViolations(page, 'settings')
        await shot(page, '40-settings')

        await page.setViewportSize({ width: 390, height: 844 })
        await page.reload()
        await page.waitForSelector('h1:has-text("Settings")')
        await timeout.locator('button:has-text("Back to default")').click()
        await page.waitForSelector('text=Delivery timeout: back to its default')
        assert.equal(settings.integer('webhooks.timeoutMs'), 10_000)
        assert.equal(await timeout.locator('input[name=value]').inputValue(), '10000')
        await shot(page, '41-settings-phone')

        // The user page: the auth service's panel lists this console's own sign-in session.
        await page.setViewportSize({ width: 1366, height: 900 })
        await page.goto(`${serverUrl()}/admin/users/${admin.id}`)
        const panel = page.locator('[data-panel="authSessions"]')
        await panel.locator('h2:has-text("Sign-in sessions (1)")').waitFor()
        assert.include(await panel.innerText(), '127.0.0.1')
        await panel.locator('button:has-text("End")').waitFor()
        await expectNoSeriousViolations(page, 'user page')
        await shot(page, '42-user-panels')
        await page.setViewportSize({ width: 390, height: 844 })
        await page.reload()
        await panel.locator('h2:has-text("Sign-in sessions (1)")').waitFor()
        await shot(page, '43-user-panels-phone')
        assert.deepEqual(errors, [])
      } finally {
        await context.close()
      }
    })
})
