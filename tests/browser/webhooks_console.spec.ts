import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import type { Page } from 'playwright-core'
import { OutboxService } from '#core/outbox/outbox_service'
import { eventually } from '#plugins/tables/tests/helpers/tables'
import { startReceiver } from '#plugins/webhooks/tests/helpers/receiver'
import { loosen } from '#plugins/webhooks/tests/helpers/setup'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { hasChromium, noChromium, shot } from './chromium.js'
import { apiAs, openPage, useConsoleBrowser } from './console_browser.js'

async function signIn(page: Page, email: string) {
  await page.goto(`${serverUrl()}/admin/login`)
  await page.fill('input[name=login]', email)
  await page.fill('input[name=password]', TEST_PASSWORD)
  await page.click('button[type=submit]')
}

/** The state tags of the deliveries listed on a webhook's page, newest first. */
const states = (page: Page) =>
  page.locator('[data-delivery]').evaluateAll((rows) => rows.map((row) => row.dataset.status))

test.group('webhooks console in a browser (Chromium)', (group) => {
  const browser = useConsoleBrowser(group)

  test(
    'an administrator finds a table webhook, reads its failed deliveries, sends them again, rotates its secret, disables, enables and deletes it'
  )
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const restore = await loosen()
      const receiver = await startReceiver()
      const outbox = await app.container.make(OutboxService)
      const savedAttempts = outbox.settings.maxAttempts
      try {
        // A table and a book subscription of an owner's, through api.php.
        const owner = await makeUser()
        const call = await apiAs(owner)
        const code = `wh${Date.now().toString(36)}`
        await call({ req: 'createBook', b_c: code })
        const table = await call({
          req: 'createTable',
          b_o: owner.code,
          b_c: code,
          name: 'Orders',
          fields: JSON.stringify([{ name: 'Item', type: 'shorttext' }]),
        })
        const catId = Number(table.body.catId)
        const rowsHook = await call({
          req: 'createWebhook',
          b_o: owner.code,
          catId,
          url: receiver.url,
          events: 'row.created',
          description: 'Order feed',
        })
        const bookHook = await call({
          req: 'createWebhook',
          b_o: owner.code,
          b_c: code,
          url: `${receiver.url}?messages`,
          events: 'message.created',
        })
        assert.equal(rowsHook.body.status, 'ok', rowsHook.text)
        const id = Number(rowsHook.body.webhook.id)
        receiver.state.secrets.push(rowsHook.body.secret, bookHook.body.secret)

        // Two row changes whose deliveries fail for good (500, two attempts each).
        outbox.settings.maxAttempts = 2
        receiver.state.answer = () => 500
        const tables = await call({
          req: 'getBookTables',
          b_o: owner.code,
          b_c: code,
          includeFields: 'true',
        })
        const fieldId = tables.body.bookTables.categories[0].fields[0].id
        for (const item of ['pen', 'ink'])
          await call({
            req: 'createOrUpdateTableRow',
            rowId: 'tmp1',
            catId,
            bypassUrlTrigger: 'false',
            fieldValues: JSON.stringify({ [fieldId]: item }),
          })
        await eventually(async () => {
          const rows = await db
            .from('outbox_deliveries')
            .where('recipient', `wh:${id}`)
            .where('state', 'failed')
          return rows.length === 2
        })
        receiver.state.answer = () => 200
        outbox.settings.maxAttempts = savedAttempts

        const admin = await makeUser({ isAdmin: true })
        const { context, page, errors } = await openPage(browser())
        await page.setViewportSize({ width: 1366, height: 900 })
        await signIn(page, admin.email!)
        await page.waitForURL(`${serverUrl()}/admin`)

        // The list: both subscriptions, found by the table's name, then the book's only.
        await page.click('nav >> text=Webhooks')
        await page.waitForURL(/\/admin\/webhooks$/)
        await page.fill('input[name=search]', code)
        await page.click('form[role=search] button')
        await page.waitForURL(/search=/)
        await page.waitForSelector(`[data-webhook="${id}"]`)
        assert.equal(await page.locator('[data-webhook]').count(), 2)
        await shot(page, 'webhooks-01-list')
        await page.selectOption('select[name=kind]', 'book')
        await page.waitForURL(/kind=book/)
        await page.waitForSelector(`[data-webhook="${id}"]`, { state: 'detached' })
        assert.equal(await page.locator('[data-webhook]').count(), 1)
        await page.selectOption('select[name=kind]', '')
        await page.waitForSelector(`[data-webhook="${id}"]`)
        await page.click(`[data-webhook="${id}"] >> text=Orders`)
        await page.waitForURL(new RegExp(`table=${catId}`))
        assert.equal(await page.locator('[data-webhook]').count(), 1)
        assert.include(await page.locator('h1').innerText(), 'Orders')

        // The webhook: its two failed deliveries, each with its attempts and the answer.
        await page.click(`a[href="/admin/webhooks/${id}"]`)
        await page.waitForURL(new RegExp(`/admin/webhooks/${id}$`))
        await page.waitForSelector('[data-delivery]')
        assert.deepEqual(await states(page), ['failed', 'failed'])
        const newest = page.locator('[data-delivery]').first()
        assert.include(await newest.innerText(), 'HTTP 500')
        await newest.locator('summary').click()
        assert.include(await newest.innerText(), 'answer 500')
        await shot(page, 'webhooks-02-failed-deliveries')

        // Send the newest again, then every failed one since yesterday.
        await newest.locator('button:has-text("Send again")').click()
        await page.waitForSelector('.notice:has-text("Sent again")')
        await eventually(async () => receiver.received.filter((r) => r.status === 200).length >= 1)
        await page.reload()
        await page.waitForSelector('[data-delivery]')
        assert.deepEqual(await states(page), ['delivered', 'failed'])
        await page.click('form[aria-label="Redeliver failed"] button[type=submit]')
        await page.waitForSelector('.notice:has-text("Sent again")')
        await eventually(async () => receiver.received.filter((r) => r.status === 200).length >= 2)
        await page.reload()
        await page.waitForSelector('[data-delivery]')
        assert.deepEqual(await states(page), ['delivered', 'delivered'])
        await page.selectOption('select[name=status]', 'failed')
        await page.waitForURL(/status=failed/)
        await page.waitForSelector('text=No delivery.')
        await page.selectOption('select[name=status]', '')
        await page.waitForSelector('[data-delivery]')

        // Rotate the secret: the new one is shown once, and signs the test event with the old one.
        await page.click('button:has-text("Rotate secret")')
        await page.click('button:has-text("Yes, rotate secret")')
        const secretText = await page.locator('[data-testid=new-secret] code').innerText()
        const shown = secretText.trim()
        assert.match(shown, /^whsec_/)
        assert.notEqual(shown, rowsHook.body.secret)
        await shot(page, 'webhooks-03-new-secret')
        receiver.state.secrets.length = 0
        receiver.state.secrets.push(shown)
        await page.click('button:has-text("Send a test event")')
        await page.waitForSelector('.notice:has-text("webhook.test")')
        await eventually(async () => receiver.received.some((r) => r.body.type === 'webhook.test'))
        const tested = receiver.received.find((r) => r.body.type === 'webhook.test')!
        assert.lengthOf(tested.signatures, 2)
        assert.lengthOf(receiver.rejected, 0)
        await page.reload()
        await page.waitForSelector('[data-delivery]')
        assert.equal(await page.locator('[data-testid=new-secret]').count(), 0)
        assert.notInclude(await page.locator('body').innerText(), shown)

        // Disable and enable, as updateWebhook does.
        await page.click('button:has-text("Disable")')
        await page.waitForSelector('.notice:has-text("Webhook disabled")')
        await page.waitForSelector('h1 .tag:has-text("disabled")')
        let listed = await call({ req: 'listWebhooks', b_o: owner.code, catId })
        assert.isFalse(listed.body.webhooks[0].active)
        await page.click('button:has-text("Enable")')
        await page.waitForSelector('h1 .tag:has-text("active")')
        listed = await call({ req: 'listWebhooks', b_o: owner.code, catId })
        assert.isTrue(listed.body.webhooks[0].active)

        // At phone width.
        await page.setViewportSize({ width: 390, height: 844 })
        await page.reload()
        await page.waitForSelector('[data-delivery]')
        await shot(page, 'webhooks-04-webhook-phone')
        await page.goto(`${serverUrl()}/admin/webhooks?search=${code}`)
        await page.waitForSelector(`[data-webhook="${id}"]`)
        await shot(page, 'webhooks-05-list-phone')
        await page.setViewportSize({ width: 1366, height: 900 })

        // Delete it: the list and listWebhooks no longer have it.
        await page.goto(`${serverUrl()}/admin/webhooks/${id}`)
        await page.click('button:has-text("Delete webhook")')
        await page.click('button:has-text("Yes, delete webhook")')
        await page.waitForURL(/\/admin\/webhooks$/)
        await page.waitForSelector(`.notice:has-text("Webhook ${id} deleted")`)
        listed = await call({ req: 'listWebhooks', b_o: owner.code, catId })
        assert.lengthOf(listed.body.webhooks, 0)
        const gone = await page.goto(`${serverUrl()}/admin/webhooks/${id}`)
        assert.equal(gone?.status(), 404)
        assert.deepEqual(errors, [])
        await context.close()

        // A user who is not an administrator gets no console page.
        const visitor = await openPage(browser())
        await signIn(visitor.page, owner.email!)
        await visitor.page.goto(`${serverUrl()}/admin/webhooks/${bookHook.body.webhook.id}`)
        assert.notInclude(await visitor.page.locator('body').innerText(), bookHook.body.webhook.url)
        assert.equal(await visitor.page.locator('[data-delivery]').count(), 0)
        await visitor.context.close()
      } finally {
        outbox.settings.maxAttempts = savedAttempts
        await restore()
        await receiver.close()
      }
    })
    .timeout(180_000)
})
