import { test } from '@japa/runner'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { hasChromium, noChromium, shot } from './chromium.js'
import { apiAs, openPage, useConsoleBrowser } from './console_browser.js'
import { expectNoSeriousViolations } from './axe.js'
import { GridSearch } from '#plugins/tables/admin/grid_search'

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
      const field = await call({
        req: 'createField',
        b_o: admin.code,
        catId,
        name: 'Only',
        type: 'shorttext',
      })
      const rows = Object.fromEntries(
        ['one', 'two', 'four'].map((text, index) => [`tmp${index}`, { [field.body.fieldId]: text }])
      )
      await call({ req: 'createOrUpdateTableRows', b_o: admin.code, rows: JSON.stringify(rows) })
      const { countCap, indexMinRows } = GridSearch

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

        // A search that scans past the count cap says so; a sort of a big table reports its index.
        GridSearch.countCap = 2
        await page.goto(`${serverUrl()}/admin/tables/${catId}?search=o`)
        const pager = page.locator('[data-pager=rows]')
        await pager.waitFor()
        assert.include(await pager.innerText(), 'Page 1 of 1+')
        assert.include(await pager.innerText(), 'more than 2 match: narrow the search')
        assert.equal(await page.locator('table.grid tbody tr').count(), 3)
        await shot(page, '63-grid-search-more')
        GridSearch.indexMinRows = 2
        await page.goto(`${serverUrl()}/admin/tables/${catId}?sort=${field.body.fieldId}`)
        const built = page.locator('[data-index-built]')
        await built.waitFor()
        assert.match(await built.innerText(), /^An index on Only was built \(\d+\.\d s\)/)
        await shot(page, '64-grid-index-built')
        await expectNoSeriousViolations(page, 'grid with an index built')
        await page.reload()
        await page.locator('table.grid tbody tr').first().waitFor()
        assert.equal(await built.count(), 0, 'built once: not reported again')
        assert.deepEqual(errors, [])
      } finally {
        GridSearch.countCap = countCap
        GridSearch.indexMinRows = indexMinRows
        await context.close()
      }
    })
    .timeout(120_000)
})
