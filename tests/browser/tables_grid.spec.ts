import { test } from '@japa/runner'
import type { Page } from 'playwright-core'
import { hasChromium, noChromium, shot } from './chromium.js'
import { apiAs, openPage, useConsoleBrowser } from './console_browser.js'
import { AxeBuilder } from '@axe-core/playwright'
import { describeViolations } from './axe.js'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'

/**
 * axe-core on the grid page as tests/browser/axe.ts runs it (serious or critical violations,
 * or no main landmark, fail), leaving out the console's side navigation: the layout is the
 * every-page spec's to check (its active link's contrast is being fixed there).
 */
async function expectNoSeriousViolations(page: Page, label: string) {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .exclude('nav.side')
    .analyze()
  const bad = results.violations.filter(
    (violation) =>
      violation.impact === 'serious' ||
      violation.impact === 'critical' ||
      violation.id === 'landmark-one-main'
  )
  if (bad.length > 0)
    throw new Error(`axe-core on ${label} (${page.url()}):\n${describeViolations(bad)}`)
}

/** The text of one cell of the grid (its editor's button, or its plain text). */
const cell = (page: Page, rowId: number, fieldId: number) =>
  page.locator(`tr[data-row="${rowId}"] td[data-field="${fieldId}"]`)

test.group('tables console: the grid in a browser (Chromium)', (group) => {
  const browser = useConsoleBrowser(group)

  test('edits a cell, sees another client write live, opens the row panel, at 1366 and 390 px')
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })
      const call = await apiAs(admin)
      const bookCode = `grid${Date.now().toString(36)}`
      const book = await call({ req: 'createBook', b_c: bookCode })
      assert.equal(book.body.status, 'ok', book.text)
      const created = await call({
        req: 'createTable',
        b_o: admin.code,
        b_c: bookCode,
        name: 'Deliveries',
        fields: JSON.stringify([
          { name: 'Customer', type: 'shorttext' },
          { name: 'Amount', type: 'double' },
          { name: 'Status', type: 'enum', options: { values: ['planned', 'sent', 'lost'] } },
          { name: 'Paid', type: 'checkbox' },
          { name: 'Notes', type: 'mediumtext' },
          { name: 'Talk', type: 'comments' },
        ]),
      })
      assert.equal(created.body.status, 'ok', created.text)
      const catId = created.body.catId as number
      const tables = await call({
        req: 'getBookTables',
        b_o: admin.code,
        b_c: bookCode,
        includeFields: 'true',
      })
      const fields = tables.body.bookTables.categories.find((entry: any) => entry.id === catId)
        .fields as { id: number; name: string }[]
      const fieldId = (name: string) => fields.find((field) => field.name === name)!.id
      const rows = Object.fromEntries(
        Array.from({ length: 30 }, (_, n) => [
          `tmp${n}`,
          {
            [fieldId('Customer')]: `Customer ${n}`,
            [fieldId('Amount')]: n * 10,
            [fieldId('Status')]: ['planned', 'sent', 'lost'][n % 3],
            [fieldId('Paid')]: n % 2 === 0,
            [fieldId('Notes')]:
              n % 4 === 0 ? `A longer note for delivery ${n}, to see how it is cut` : '',
          },
        ])
      )
      const written = await call({
        req: 'createOrUpdateTableRows',
        b_o: admin.code,
        rows: JSON.stringify(rows),
      })
      assert.equal(written.body.status, 'ok', written.text)
      const [first, second] = written.body.newRows.map((row: any) => Number(row.id)) as number[]
      const commented = await call({
        req: 'editTableValueComments',
        fieldId: fieldId('Talk'),
        rowId: String(second),
        m: 'Ring twice',
      })
      assert.equal(commented.body.status, 'ok', commented.text)

      const { context, page, errors } = await openPage(browser())
      page.setDefaultTimeout(60_000)
      await page.setViewportSize({ width: 1366, height: 900 })
      await page.goto(`${serverUrl()}/admin/login`)
      await page.fill('input[name=login]', admin.email!)
      await page.fill('input[name=password]', TEST_PASSWORD)
      await page.click('button[type=submit]')
      await page.waitForURL(`${serverUrl()}/admin`)
      // Off the dashboard first: its own live channel opens once the page has loaded, and when
      // that was after the listener below began to count, it was counted as the grid's.
      await page.goto(`${serverUrl()}/admin/users`)

      // The grid's live connection: one for the page's life, whatever the page posts.
      const liveConnections: string[] = []
      page.on('request', (request) => {
        if (request.url().includes('/__transmit/events')) liveConnections.push(request.url())
      })
      await page.goto(`${serverUrl()}/admin/tables/${catId}`)
      await page.waitForSelector('table.grid [data-row]')
      await page.waitForSelector('text=cells follow changes live')
      assert.include(await page.locator('.grid-pager').innerText(), '30 in all')
      await expectNoSeriousViolations(page, 'table grid at 1366 px')
      await shot(page, 'tables-grid-1366')
      // A marker that a full page load would lose: what follows happens in place.
      await page.evaluate(() => ((globalThis as any).__gridMarker = 1))

      // Edit a cell with the keyboard: Enter opens the editor, Enter saves.
      const customer = cell(page, first, fieldId('Customer'))
      await customer.locator('button').focus()
      await page.keyboard.press('Enter')
      const input = customer.locator('input')
      await input.fill('Edited in the browser')
      await input.press('Enter')
      await customer.locator('button:has-text("Edited in the browser")').waitFor()
      await page.waitForSelector('text=Customer of row 1 saved')
      // The focus is back on the cell's button, where the keyboard left it.
      await page.waitForFunction(() =>
        (globalThis as any).document.activeElement?.matches('.cell-button')
      )
      assert.include(
        await page.evaluate(() => (globalThis as any).document.activeElement.ariaLabel),
        'Edit Customer, row 1'
      )
      const read = await call({ req: 'getTableValues', catId, format: 'diff_ready_rows' })
      assert.equal(read.body.tableValues.rows[first][fieldId('Customer')], 'Edited in the browser')
      // A value the field refuses is said, and nothing changes.
      const amount = cell(page, first, fieldId('Amount'))
      await amount.locator('button').click()
      await amount.locator('input').fill('ten euros')
      await amount.locator('input').press('Enter')
      await page.waitForSelector('[role=alert]')
      assert.match(await page.locator('[role=alert]').first().innerText(), /number/i)
      assert.equal(await amount.innerText(), '0')

      // Another client writes: the cell follows without a reload, on the connection the page
      // opened (a new one per save missed what was announced before it subscribed).
      assert.lengthOf(liveConnections, 1)
      const elsewhere = await call({
        req: 'updateTableValue',
        rowId: String(second),
        fieldId: fieldId('Customer'),
        value: 'Written by another client',
      })
      assert.equal(elsewhere.body.status, 'ok', elsewhere.text)
      await cell(page, second, fieldId('Customer'))
        .locator('text=Written by another client')
        .waitFor()
      assert.equal(await page.evaluate(() => (globalThis as any).__gridMarker), 1)

      // The row panel: its cells, comment and changes.
      const opener = page.locator(`[data-open-row="${second}"]`)
      await opener.click()
      const panel = page.locator('aside.row-panel')
      await panel.locator('text=Ring twice').waitFor()
      await panel
        .locator('text=changed Customer from Customer 1 to Written by another client')
        .waitFor()
      assert.equal(await opener.getAttribute('aria-expanded'), 'true')
      await expectNoSeriousViolations(page, 'table grid with its row panel at 1366 px')
      await shot(page, 'tables-grid-panel-1366')

      // Sort by a column, filter, and the column list's toggle.
      await page.click(`button[data-sort="${fieldId('Amount')}"]`)
      await page.waitForURL(/sort=/)
      await page.click(`button[data-sort="${fieldId('Amount')}"]`)
      await page.waitForURL(/dir=desc/)
      await page.waitForSelector(`table.grid tbody tr:first-child:has-text("Customer 29")`)
      const filters = page.locator('button[aria-controls=grid-filters]')
      await filters.click()
      assert.equal(await filters.getAttribute('aria-expanded'), 'true')
      await page.click('text=Add a filter')
      await page.selectOption('#grid-filters select >> nth=0', String(fieldId('Status')))
      await page.selectOption('#grid-filters select >> nth=1', 'is')
      await page.fill('#grid-filters input', 'lost')
      await page.click('text=Apply filters')
      await page.waitForURL(/filters=/)
      await page.waitForSelector('.grid-pager:has-text("10 in all")')
      const columns = page.locator('button[aria-controls=grid-columns]')
      await columns.click()
      await page.locator('#grid-columns label:has-text("Notes") input').uncheck()
      assert.equal(await page.locator(`td[data-field="${fieldId('Notes')}"]`).count(), 0)
      await expectNoSeriousViolations(page, 'table grid with filters and columns at 1366 px')
      await shot(page, 'tables-grid-filtered-1366')
      assert.equal(await page.evaluate(() => (globalThis as any).__gridMarker), 1)

      // A phone.
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto(`${serverUrl()}/admin/tables/${catId}`)
      await page.waitForSelector('table.grid [data-row]')
      await expectNoSeriousViolations(page, 'table grid at 390 px')
      await shot(page, 'tables-grid-390')
      await page.locator(`[data-open-row="${second}"]`).click()
      await page.locator('aside.row-panel >> text=Ring twice').waitFor()
      await expectNoSeriousViolations(page, 'table grid with its row panel at 390 px')
      await shot(page, 'tables-grid-panel-390')
      await page.click('aside.row-panel button:has-text("Close")')
      await page.locator('aside.row-panel').waitFor({ state: 'detached' })

      assert.deepEqual(errors, [])
      await context.close()
    })
})
