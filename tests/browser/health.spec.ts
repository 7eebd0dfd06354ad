import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import app from '@adonisjs/core/services/app'
import { QueueService } from '#core/services/queue_service'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { hasChromium, noChromium, shot } from './chromium.js'
import { openPage, useConsoleBrowser } from './console_browser.js'

test.group('admin console in a browser: Health page', (group) => {
  const browser = useConsoleBrowser(group)

  test('an administrator reads the Health page at both widths and retries a failed job')
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })
      const queue = await app.container.make(QueueService)
      const jobId = randomUUID()
      await queue.driver.add({
        id: jobId,
        name: 'health.browser.unknown',
        payload: {},
        attempts: 1,
        backoff: 0,
        delay: 0,
      })

      const { context, page, errors } = await openPage(browser())
      try {
        await page.goto(`${serverUrl()}/admin/login`)
        await page.fill('input[name=login]', admin.email!)
        await page.fill('input[name=password]', TEST_PASSWORD)
        await page.click('button[type=submit]')
        await page.waitForURL(`${serverUrl()}/admin`)
        await page.click('nav >> text=Health')
        await page.waitForURL(`${serverUrl()}/admin/health`)
        await page.waitForSelector('h2:has-text("Background jobs")')
        // The failed job shows up within a poll or two (the worker runs it first).
        const row = page.locator(`tr[data-job="${jobId}"]`)
        await row.waitFor({ timeout: 30_000 })
        assert.include(await row.innerText(), 'No enabled plugin handles the job')
        await shot(page, '20-health')
        await row.locator('button:has-text("Retry")').click()
        await row.locator('button:has-text("Yes, retry")').click()
        await page.waitForSelector('text=The job is back in line')
        await page.setViewportSize({ width: 390, height: 844 })
        await page.reload()
        await page.waitForSelector('h2:has-text("Background jobs")')
        await shot(page, '21-health-phone')
        assert.deepEqual(errors, [])
      } finally {
        await context.close()
        await queue.purgeDead()
      }
    })
})
