import { test } from '@japa/runner'
import { serverUrl } from '#tests/helpers/server'
import { SHOTS, hasChromium, noChromium, shot } from './chromium.js'
import { openPage, useConsoleBrowser } from './console_browser.js'

const loopback = (url: string) =>
  ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname)

test.group('API reference page in a browser', (group) => {
  const browser = useConsoleBrowser(group)

  test(
    '/docs renders the OpenAPI and the AsyncAPI documents offline, asking nothing of another host'
  )
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      const { context, page, errors } = await openPage(browser())
      // The reference renders every operation of every plugin: on a loaded machine its layout
      // and screenshots take far longer than a console page's.
      page.setDefaultTimeout(90_000)
      const elsewhere: string[] = []
      // Offline: anything but this server is refused and recorded.
      await context.route('**/*', (route) => {
        const url = route.request().url()
        if (url.startsWith('data:') || url.startsWith('blob:') || loopback(url))
          return route.continue()
        elsewhere.push(url)
        return route.abort()
      })
      try {
        await page.setViewportSize({ width: 1366, height: 900 })
        await page.goto(`${serverUrl()}/docs`)
        await page.getByText('Quire API', { exact: false }).first().waitFor({ timeout: 30_000 })
        // Operations from the registry, with their summaries and parameters.
        await page.getByText("The user's books and contacts").first().waitFor()
        await shot(page, '50-api-docs')
        // Every plugin's operations and the part B routes have their section (tags).
        for (const tag of ['tables', 'webhooks', 'media URLs', 'uploads (tus)', 'auth service']) {
          await page.getByText(tag, { exact: true }).first().waitFor()
        }
        // The tables section, opened from the sidebar: getTableValues with its summary. A click
        // before the reference's scripts listen opens nothing (a loaded machine): click again
        // until the section shows the operation (a second click on an open one would close it).
        const operation = page.getByText('A page of rows of a table').first()
        for (let attempt = 0; attempt < 6 && !(await operation.isVisible()); attempt++) {
          await page.getByText('tables', { exact: true }).first().click()
          await operation.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {})
        }
        await operation.click()
        await page.getByRole('heading', { name: 'A page of rows of a table' }).first().waitFor()
        // The viewport only: the whole page is several screens of every plugin's operations.
        await page.screenshot({ path: `${SHOTS}/50-api-docs-tables.png` })

        await page.goto(`${serverUrl()}/docs?api=socket`)
        await page.getByText('Quire socket', { exact: false }).first().waitFor({ timeout: 30_000 })
        await page.getByText('type 13: Update table value').first().waitFor()
        await page.getByText('type 8: Book updates ready').first().waitFor()
        await shot(page, '51-api-docs-socket')

        assert.deepEqual(elsewhere, [])
        assert.deepEqual(errors, [])
      } finally {
        await context.close()
      }
    })
})
