import { test } from '@japa/runner'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { hasChromium, noChromium, shot } from './chromium.js'
import { apiAs, openPage, useConsoleBrowser } from './console_browser.js'
import { expectNoSeriousViolations } from './axe.js'

const LONG =
  'a long message that does not fit on one line of the dashboard at 1366 px, so the line is cut and must open in full'

test.group('admin console in a browser: long activity lines, a one-field table', (group) => {
  const browser = useConsoleBrowser(group)

  test('a cut activity line opens in full with "Show all" (aria-expanded); "1 field" in the grid')
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })
      const call = await apiAs(admin)
      const book = `lines${Date.now().toString(36)}`
      await call({ req: 'createBook', b_c: book })
      const sent = await call({
        req: 'sendMsg',
        b_o: admin.code,
        b_c: book,
        msg: LONG,
        uuid: `lines-${Date.now()}`,
      })
      assert.equal(sent.body.status, 'ok', sent.text)
      const table = await call({ req: 'createTable', b_o: admin.code, b_c: book, name: 'Solo' })
      const catId = Number(table.body.catId)
      await call({ req: 'createField', b_o: admin.code, catId, name: 'Only', type: 'shorttext' })

      const { context, page, errors } = await openPage(browser())
      try {
        await page.setViewportSize({ width: 1366, height: 900 })
        await page.goto(`${serverUrl()}/admin/login`)
        await page.fill('input[name=login]', admin.email!)
        await page.fill('input[name=password]', TEST_PASSWORD)
        await page.click('button[type=submit]')
        await page.waitForURL(`${serverUrl()}/admin`)
        const item = page.locator('.activity li.item', { hasText: 'a long message' }).first()
        await item.waitFor()
        const line = item.locator('.line')
        const height = async () => (await line.boundingBox())!.height
        const closed = await height()
        const more = item.locator('button.more')
        assert.equal(await more.innerText(), 'Show all')
        assert.equal(await more.getAttribute('aria-expanded'), 'false')
        // Cut: the text is wider than its line.
        assert.isTrue(
          await line.evaluate((element) => element.scrollWidth > element.clientWidth),
          'the line is cut before it opens'
        )
        await shot(page, '60-dashboard-activity-cut')
        await more.click()
        assert.equal(await more.getAttribute('aria-expanded'), 'true')
        assert.equal(await more.innerText(), 'Show less')
        assert.isAbove(await height(), closed, 'the open line wraps onto more lines')
        assert.isFalse(
          await line.evaluate((element) => element.scrollWidth > element.clientWidth),
          'the open line shows all its text'
        )
        await shot(page, '61-dashboard-activity-open')
        await expectNoSeriousViolations(page, 'dashboard with an open activity line')
        await more.click()
        assert.equal(await more.getAttribute('aria-expanded'), 'false')
        // A short line has no button.
        const short = page.locator('.activity li.item', { hasText: 'joined' }).first()
        assert.equal(await short.locator('button.more').count(), 0)

        // The grid of a one-field table says "1 field".
        await page.goto(`${serverUrl()}/admin/tables/${catId}`)
        await page.waitForSelector('h1:has-text("Solo")')
        const summary = await page.locator('h1 + p').innerText()
        assert.match(summary, /^1 field ·/)
        await shot(page, '62-grid-one-field')
        assert.deepEqual(errors, [])
      } finally {
        await context.close()
      }
    })
    .timeout(120_000)
})
