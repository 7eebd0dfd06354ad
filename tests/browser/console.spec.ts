import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { generate } from 'otplib'
import type { Page } from 'playwright-core'
import { hasChromium, noChromium, shot } from './chromium.js'
import { apiAs, openPage, useConsoleBrowser } from './console_browser.js'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { AuthUserService } from '#plugins/auth_service/services/auth_user_service'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'

const ROWS = 10_000

/** The text of a dashboard figure (Users, Messages...). */
const figure = (page: Page, name: string) =>
  page.locator(`[data-figure="${name}"] .value`).innerText()

test.group('admin console in a browser (Chromium)', (group) => {
  const browser = useConsoleBrowser(group)

  test(
    'an administrator signs in with TOTP, creates a user, a book, invites, pages a 10,000-row table and watches the dashboard'
  )
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      // Real time for the TOTP code, and no failed sign-ins left over by earlier suites.
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })
      const authUsers = await app.container.make(AuthUserService)
      await authUsers.setPolicy(admin, 'required')

      // A 10,000-row table in a book of the administrator's, written through api.php.
      const call = await apiAs(admin)
      const tableBook = `big${Date.now().toString(36)}`
      await call({ req: 'createBook', b_c: tableBook })
      const table = await call({
        req: 'createTable',
        b_o: admin.code,
        b_c: tableBook,
        name: 'Big table',
      })
      const catId = Number(table.body.catId)
      const field = await call({
        req: 'createField',
        b_o: admin.code,
        catId,
        name: 'Label',
        type: 'shorttext',
      })
      for (let start = 0; start < ROWS; start += 2_000) {
        const rows = Object.fromEntries(
          Array.from({ length: 2_000 }, (_, index) => [
            `tmp${start + index}`,
            { [field.body.fieldId]: `row ${start + index}` },
          ])
        )
        const written = await call({
          req: 'createOrUpdateTableRows',
          b_o: admin.code,
          rows: JSON.stringify(rows),
        })
        assert.equal(written.body.status, 'ok', written.text.slice(0, 300))
      }

      const { context, page, errors } = await openPage(browser())

      // Sign-in: password, then TOTP enrolment (the policy requires it) with a real code.
      await page.goto(`${serverUrl()}/`)
      await page.waitForSelector('input[name=login]')
      await shot(page, '01-sign-in')
      await page.fill('input[name=login]', admin.email!)
      await page.fill('input[name=password]', TEST_PASSWORD)
      await page.click('button[type=submit]')
      const shown = await page.locator('[data-testid=totp-secret]').innerText()
      const secret = shown.trim()
      await shot(page, '02-totp-enrolment')
      await page.fill('input[name=code]', await generate({ secret }))
      await page.click('button[type=submit]')
      // The Account page shows the ten recovery codes, once.
      await page.waitForURL(`${serverUrl()}/admin/account`)
      await page.waitForSelector('[data-testid=recovery-codes] li >> nth=9')
      await shot(page, '03-recovery-codes')
      await page.click('nav >> text=Dashboard')
      await page.waitForURL(`${serverUrl()}/admin`)
      await page.waitForSelector('[data-figure="messages"]')
      assert.equal(await page.locator('[data-testid=totp-warning]').count(), 0)
      await shot(page, '03-dashboard')

      // Create a user.
      await page.click('nav >> text=Users')
      await page.waitForURL(/\/admin\/users$/)
      await page.click('text=New user')
      const code = `web${Date.now().toString(36)}`
      const newUser = page.locator('form[aria-label="New user"]')
      await newUser.locator('input[name=code]').fill(code)
      await newUser.locator('input[name=email]').fill(`${code}@example.test`)
      await newUser.locator('input[name=password]').fill('browser password 1')
      await shot(page, '04-users-new')
      await newUser.locator('button[type=submit]').click()
      await page.waitForURL(/\/admin\/users\/\d+$/)
      await page.waitForSelector(`h1:has-text("${code}")`)
      await shot(page, '05-user')

      // Create a book and invite that user.
      await page.click('nav >> text=Books')
      await page.waitForURL(/\/admin\/books$/)
      await page.click('text=New book')
      const bookCode = `wb${Date.now().toString(36)}`
      const newBook = page.locator('form[aria-label="New book"]')
      await newBook.locator('input[name=code]').fill(bookCode)
      await newBook.locator('input[name=title]').fill('Browser book')
      await newBook.locator('button[type=submit]').click()
      await page.waitForURL(/\/admin\/books\/\d+$/)
      await page.locator('form[aria-label="Invite"] input[name=login]').fill(code)
      await page.locator('form[aria-label="Invite"] button[type=submit]').click()
      await page.waitForSelector(`[data-member="${code}"]`)
      assert.include(await page.locator(`[data-member="${code}"]`).innerText(), 'invited')
      await shot(page, '06-book-invited')
      // The members' search box reloads the members alone (a partial reload), in place.
      const membersSearch = page.locator('form[data-search=members]')
      await membersSearch.locator('input').fill(admin.code)
      await membersSearch.locator('button').click()
      await page.waitForURL(/membersSearch=/)
      await page.waitForSelector(`[data-member="${code}"]`, { state: 'detached' })
      assert.equal(await page.locator('[data-member]').count(), 1)
      assert.include(await page.locator('[data-pager=members]').innerText(), '1 in all')
      await page.waitForSelector('h1:has-text("Browser book")')

      // Page through the 10,000-row table, on the server.
      await page.click('nav >> text=Tables')
      await page.waitForURL(/\/admin\/tables$/)
      await page.fill('input[name=search]', tableBook)
      await page.click('form[role=search] button')
      await page.waitForURL(/search=/)
      await page.waitForSelector(`a[href="/admin/tables/${catId}"]`)
      await shot(page, '07-tables')
      await page.click(`a[href="/admin/tables/${catId}"]`)
      await page.waitForSelector('table.grid [data-row]')
      assert.include(await page.locator('.pager').innerText(), '10,000 in all')
      assert.include(await page.locator('table.grid tbody tr').first().innerText(), 'row 0')
      await page.click('a[rel=next]')
      await page.waitForURL(/page=2/)
      await page.waitForSelector('table.grid tbody tr:first-child:has-text("row 50")')
      await shot(page, '08-table-page-2')
      await page.goto(`${serverUrl()}/admin/tables/${catId}?page=200`)
      await page.waitForSelector('table.grid tbody tr:last-child:has-text("row 9999")')
      assert.include(await page.locator('.pager').innerText(), 'Page 200 of 200')
      await shot(page, '09-table-last-page')

      // The dashboard's message count follows a message sent through api.php, without a reload.
      await page.click('nav >> text=Dashboard')
      await page.waitForSelector('[data-figure="messages"]')
      const counted = await figure(page, 'messages')
      const before = Number(counted.replace(/\D/g, ''))
      const sent = await call({
        req: 'sendMsg',
        b_o: admin.code,
        b_c: tableBook,
        msg: 'seen from the dashboard',
        uuid: `dash-${Date.now()}`,
      })
      assert.equal(sent.body.status, 'ok', sent.text)
      await page.waitForFunction(
        ({ selector, expected }) =>
          (globalThis as any).document.querySelector(selector)?.textContent?.replace(/\D/g, '') ===
          expected,
        { selector: '[data-figure="messages"] .value', expected: String(before + 1) },
        { timeout: 30_000 }
      )
      await page.waitForSelector('text=seen from the dashboard')
      await shot(page, '10-dashboard-after-message')

      // Plugins, and the shell at phone width.
      await page.click('nav >> text=Plugins')
      await page.waitForSelector('h1:has-text("Plugins")')
      await shot(page, '11-plugins')
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto(`${serverUrl()}/admin`)
      await page.waitForSelector('[data-figure="messages"]')
      await shot(page, '12-dashboard-phone')
      await page.click('button[aria-label=Menu]')
      await shot(page, '13-menu-phone')

      // Sign out: back to the sign-in page, the console closed.
      await page.click('text=Sign out')
      await page.waitForURL(/\/admin\/login$/)
      await page.goto(`${serverUrl()}/admin/users`)
      await page.waitForURL(/\/admin\/login$/)
      assert.deepEqual(errors, [])
      await context.close()
    })
    .timeout(300_000)
})
