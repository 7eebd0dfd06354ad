import { test } from '@japa/runner'
import type { Page } from 'playwright-core'
import { hasChromium, noChromium, shot } from './chromium.js'
import { apiAs, openPage, useConsoleBrowser } from './console_browser.js'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'

/**
 * Watches the document from now on: records whether any of `markers` ever
 * appears in the page's text (a page restored from the history for a moment
 * counts), and counts the requests to the console's pages.
 */
async function watch(page: Page, markers: string[]) {
  await page.evaluate((texts) => {
    const root = globalThis as any
    root.__seen = []
    const check = () => {
      const body = root.document.body?.innerText ?? ''
      for (const text of texts)
        if (body.includes(text) && !root.__seen.includes(text)) root.__seen.push(text)
    }
    check()
    new root.MutationObserver(check).observe(root.document, {
      subtree: true,
      childList: true,
      characterData: true,
    })
  }, markers)
}
const seen = (page: Page) => page.evaluate(() => (globalThis as any).__seen as string[])

test.group('admin console in a browser: the back button after sign-out (Chromium)', (group) => {
  const browser = useConsoleBrowser(group)

  test('after sign-out, back shows neither the plugins page nor the dashboard and its messages')
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })
      // A message whose text the dashboard's recent activity shows.
      const call = await apiAs(admin)
      const book = `hist${Date.now().toString(36)}`
      await call({ req: 'createBook', b_c: book })
      const secret = `secret text ${Date.now().toString(36)}`
      const sent = await call({
        req: 'sendMsg',
        b_o: admin.code,
        b_c: book,
        msg: secret,
        uuid: book,
      })
      assert.equal(sent.body.status, 'ok', sent.text)

      const { context, page, errors } = await openPage(browser())

      await page.goto(`${serverUrl()}/admin/login`)
      await page.fill('input[name=login]', admin.email!)
      await page.fill('input[name=password]', TEST_PASSWORD)
      await page.click('button[type=submit]')
      await page.waitForURL(`${serverUrl()}/admin`)
      await page.waitForSelector(`text=${secret}`)
      const users = await page.locator('[data-figure="users"] .value').innerText()
      await page.click('nav >> text=Plugins')
      await page.waitForSelector('h1:has-text("Plugins")')
      await page.waitForSelector('text=auth_service')
      await shot(page, 'history-01-plugins-signed-in')

      await page.click('text=Sign out')
      await page.waitForURL(/\/admin\/login$/)
      await page.waitForSelector('input[name=login]')
      await watch(page, [secret, 'auth_service', 'Dashboard'])

      // Back to the plugins page: the history entry cannot be read any more (its key is gone),
      // so the console asks the server for the page, which answers the sign-in page. (Inertia
      // keeps the address bar on the entry's URL when the answer equals the page shown.)
      const asked: string[] = []
      // Pages only: the page's own files (scripts, the favicon) may come from the cache or not.
      page.on('request', (request) => {
        if (!request.url().includes('/admin/assets/')) asked.push(new URL(request.url()).pathname)
      })
      const signInAnswered = () =>
        page.waitForResponse((response) => new URL(response.url()).pathname === '/admin/login')
      let answered = signInAnswered()
      await page.goBack()
      await answered
      await page.waitForSelector('input[name=login]')
      await shot(page, 'history-02-back-once')
      assert.deepEqual(asked, ['/admin/plugins', '/admin/login'])
      // And once more, to the dashboard.
      answered = signInAnswered()
      await page.goBack()
      await answered
      await page.waitForSelector('input[name=login]')
      await shot(page, 'history-03-back-twice')
      assert.deepEqual(asked.slice(2), ['/admin', '/admin/login'])

      assert.deepEqual(await seen(page), [])
      assert.notInclude(await page.locator('body').innerText(), secret)
      assert.equal(await page.locator('[data-figure]').count(), 0)
      assert.match(users, /\d/)
      assert.deepEqual(errors, [])
      await context.close()
    })
    .timeout(120_000)
})
