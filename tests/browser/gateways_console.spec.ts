import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { Readable } from 'node:stream'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import type { Page } from 'playwright-core'
import { OutboxService } from '#core/outbox/outbox_service'
import { hasChromium, noChromium, shot } from './chromium.js'
import { openPage, useConsoleBrowser } from './console_browser.js'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { waitFor } from '#tests/helpers/queue'
import { resetAuthState } from '#plugins/auth_service/tests/helpers'
import { book, client, send, share } from '#plugins/books/tests/helpers/books'
import gatewaysConfig from '#plugins/gateways/config'
import { call, uniquePhone } from '#plugins/gateways/tests/helpers/gateways'
import { startFakeFcm, type FakeFcm } from '#plugins/gateways/tests/helpers/push_fakes'
import { SmsOutboxService } from '#plugins/gateways/services/sms_outbox_service'
import { MailInService } from '#plugins/gateways/services/mail_in/mail_in_service'
import { MailRefusal } from '#plugins/gateways/services/mail_in/mail_refusal'

const fcmToken = () =>
  `${randomBytes(11).toString('base64url')}:APA91b${randomBytes(100).toString('base64url')}`

/** A loopback port nothing listens on (a provider that is down). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * Reloads the page until `selector` shows (the server's state changes behind it). Generous: in a
 * full suite the shared outbox may be busy with earlier files' deliveries (waits are for state,
 * not timings).
 */
async function reloadUntil(page: Page, selector: string, what: string) {
  await waitFor(
    async () => {
      await page.reload()
      await page.waitForLoadState('networkidle')
      return (await page.locator(selector).count()) > 0
    },
    90_000,
    what
  )
}

test.group('gateways console pages in a browser (Chromium)', (group) => {
  const browser = useConsoleBrowser(group)
  let fcm: FakeFcm
  group.setup(async () => {
    fcm = await startFakeFcm()
    const outbox = await app.container.make(OutboxService)
    const saved = { fcm: { ...gatewaysConfig.fcm }, maxAttempts: outbox.settings.maxAttempts }
    Object.assign(gatewaysConfig.fcm, {
      serviceAccount: fcm.serviceAccount,
      projectId: undefined,
      baseUrl: fcm.url,
      tokenUrl: undefined,
    })
    return async () => {
      Object.assign(gatewaysConfig.fcm, saved.fcm)
      outbox.settings.maxAttempts = saved.maxAttempts
      await fcm.close()
    }
  })

  test(
    'an administrator approves a pending gateway, deactivates a device, retries a delivery and reads the SMS queue and the inbound mail log'
  )
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      await resetAuthState()
      const admin = await makeUser({ isAdmin: true })

      // A phone asks to be a gateway: refused, recorded as pending.
      const phone = uniquePhone()
      const asked = await call({ req: 'registerSMSGateway', o_u: phone, appname: 'console-phone' })
      assert.equal(asked.errorCode, 'GATEWAY_PENDING')

      // A book whose member has an Android device and an old BlackBerry one.
      const owner = await client()
      const target = await book(owner)
      const member = await client()
      await share(owner, target, member)
      const token = fcmToken()
      const android = await member.call({
        req: 'updatePushId',
        deviceType: 'gcm_rid',
        registrationID: token,
      })
      const blackberry = await member.call({
        req: 'updatePushId',
        deviceType: 'bb_dt',
        registrationID: 'a1b2c3d4',
      })
      assert.equal(android.status, 'ok')
      assert.equal(blackberry.status, 'ok')

      // Its notification fails for good: the provider is down and one attempt is allowed.
      const outbox = await app.container.make(OutboxService)
      outbox.settings.maxAttempts = 1
      gatewaysConfig.fcm.baseUrl = `http://127.0.0.1:${await closedPort()}`
      await send(owner, target, 'is anyone there?')
      const failed = await waitFor(
        () =>
          db
            .from('outbox_deliveries')
            .where('recipient', `device:${android.deviceID}`)
            .where('state', 'failed')
            .first(),
        10_000,
        'the delivery to fail'
      )
      gatewaysConfig.fcm.baseUrl = fcm.url

      // Signed out, the pages answer the sign-in page.
      const { context, page, errors } = await openPage(browser())
      // A shared, loaded machine: waits are for the pages' state, not timings.
      page.setDefaultTimeout(120_000)
      await page.goto(`${serverUrl()}/admin/gateways/sms`)
      await page.waitForURL(/\/admin\/login$/)
      await page.fill('input[name=login]', admin.email!)
      await page.fill('input[name=password]', TEST_PASSWORD)
      await page.click('button[type=submit]')
      await page.waitForURL(`${serverUrl()}/admin`)
      await page.setViewportSize({ width: 1366, height: 900 })

      // Approve the pending gateway; the phone then registers.
      await page.click('nav >> text=SMS gateways')
      await page.waitForURL(/\/admin\/gateways\/sms$/)
      const row = page.locator(`[data-gateway="${phone}"]`)
      await row.waitFor()
      assert.include(await row.innerText(), 'waiting for approval')
      assert.include(await row.innerText(), 'console-phone')
      await shot(page, 'gateways-01-pending')
      await row.locator('button:has-text("Approve")').click()
      await page.waitForSelector(`[data-gateway="${phone}"]:has-text("allowed, not connected")`)
      await shot(page, 'gateways-02-approved')
      const registered = await call({
        req: 'registerSMSGateway',
        o_u: phone,
        appname: 'console-phone',
      })
      assert.equal(registered.status, 'ok', JSON.stringify(registered))

      // Its page: connected, its rate-limit window. The administrator gives it the book.
      await row.locator('a').click()
      await page.waitForURL(/\/admin\/gateways\/sms\/\d+$/)
      await page.waitForSelector('h1:has-text("connected")')
      assert.match(await page.locator('[data-testid=rate]').innerText(), /2 of \d+ requests used/)
      const bookForm = page.locator('form[aria-label=Save]')
      await bookForm.locator('input[name=book]').fill(`${target.b_o}/${target.b_c}`)
      await bookForm.locator('button[type=submit]').click()
      await page.waitForSelector('text=set by an administrator')

      // An SMS about that book is queued for it (the rule: the book's own gateway).
      const smsOutbox = await app.container.make(SmsOutboxService)
      const bookRow = await db.from('books').where('code', target.b_c).select('id').first()
      const wakeUps: (() => unknown)[] = []
      await db.transaction((trx) =>
        smsOutbox.enqueue(
          trx,
          {
            to: '+33698765432',
            text: 'a copy for the console',
            bookId: Number(bookRow.id),
            kind: 'copy',
            idempotencyKey: `console-${phone}`,
          },
          (callback) => wakeUps.push(callback)
        )
      )
      for (const wake of wakeUps) await wake()
      await page.reload()
      await page.waitForSelector('[data-sms]:has-text("a copy for the console")')
      assert.include(await page.locator('[data-figure=sms-queued]').innerText(), '1')
      await shot(page, 'gateways-03-gateway')
      await page.click('button:has-text("Unregister")')
      await page.click('button:has-text("Yes, unregister")')
      await page.waitForSelector('h1:has-text("allowed, not connected")')
      const after = await call({
        req: 'unregisterSMSGateway',
        o_u: phone,
        sesskey: registered.sesskey,
      })
      assert.equal(after.errorCode, 'INVALID_SESSKEY')

      // Deactivate the member's Android device; the BlackBerry is listed as unreachable.
      await page.click('nav >> text=Push devices')
      await page.waitForURL(/\/admin\/gateways\/devices$/)
      const search = page.locator('form[data-search=devices]')
      await search.locator('input').fill(member.code)
      await search.locator('button').click()
      await page.waitForURL(/devicesSearch=/)
      const device = page.locator(`[data-device="${android.deviceID}"]`)
      await device.waitFor()
      assert.equal(await page.locator('[data-device]').count(), 2)
      const unreachable = page.locator(`[data-unsupported="${blackberry.deviceID}"]`)
      assert.include(await unreachable.innerText(), 'no push provider exists for bb_dt')
      await shot(page, 'gateways-04-devices')
      await device.locator('button:has-text("Deactivate")').click()
      await device.locator('button:has-text("Yes, deactivate")').click()
      await page.waitForSelector(`[data-device="${android.deviceID}"]:has-text("off")`)
      const stored = await db
        .from('gateways_push_devices')
        .where('id', android.deviceID)
        .select('active')
        .first()
      assert.isFalse(Boolean(Number(stored.active)))
      await shot(page, 'gateways-05-device-off')

      // Turned on again by its owner, the device gets the failed notification on a retry.
      const again = await member.call({
        req: 'updatePushId',
        deviceID: android.deviceID,
        active: 'TRUE',
      })
      assert.equal(again.status, 'ok')
      await page.click('nav >> text=Deliveries')
      await page.waitForURL(/\/admin\/gateways\/deliveries$/)
      await page.selectOption('select[name=state]', 'failed')
      await page.waitForURL(/state=failed/)
      const delivery = page.locator(`[data-delivery="${failed.id}"]`)
      await delivery.waitFor()
      assert.include(await delivery.innerText(), `book ${target.b_o}/${target.b_c}`)
      await shot(page, 'gateways-06-failed')
      await page.click(`a[href="/admin/gateways/deliveries/${failed.id}"]`)
      await page.waitForSelector('h1:has-text("failed")')
      assert.include(await page.locator('table').innerText(), 'no answer')
      await page.click('button:has-text("Send again")')
      await reloadUntil(page, 'h1:has-text("delivered")', 'the retried delivery to be delivered')
      assert.lengthOf(
        fcm.received.filter((message) => message.token === token),
        1
      )
      await shot(page, 'gateways-07-delivered')

      // The SMS waits in the deliveries page's SMS list.
      await page.goto(
        `${serverUrl()}/admin/gateways/deliveries?smsSearch=${encodeURIComponent(phone)}`
      )
      await page.waitForSelector('[data-sms]:has-text("a copy for the console")')

      // A refused e-mail is in the inbound mail log, with why.
      const mailIn = await app.container.make(MailInService)
      const raw = [
        `From: ${member.user.email}`,
        'To: nobody.nowhere@quire.test',
        'Subject: lost in the post',
        `Message-ID: <${Date.now()}@example.test>`,
        '',
        'hello?',
        '',
      ].join('\r\n')
      const refusal = await mailIn
        .ingest(Readable.from([Buffer.from(raw)]), {
          source: 'cli',
          recipient: 'nobody.nowhere@quire.test',
        })
        .then(
          () => null,
          (error) => error
        )
      assert.instanceOf(refusal, MailRefusal)
      await page.click('nav >> text=Inbound mail')
      await page.waitForURL(/\/admin\/gateways\/mail$/)
      await page.selectOption('select[name=outcome]', 'refused')
      await page.waitForURL(/outcome=refused/)
      const refused = page.locator('[data-outcome=refused]:has-text("lost in the post")')
      await refused.waitFor()
      assert.include(await refused.innerText(), 'MAIL_')
      await shot(page, 'gateways-08-mail')

      // The same pages at phone width.
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto(`${serverUrl()}/admin/gateways/deliveries`)
      await page.waitForSelector(`[data-delivery="${failed.id}"]`)
      await shot(page, 'gateways-09-deliveries-phone')
      await page.goto(`${serverUrl()}/admin/gateways/sms`)
      await page.waitForSelector(`[data-gateway="${phone}"]`)
      await shot(page, 'gateways-10-gateways-phone')
      await page.goto(`${serverUrl()}/admin/gateways/devices?devicesSearch=${member.code}`)
      await page.waitForSelector(`[data-device="${android.deviceID}"]`)
      await shot(page, 'gateways-11-devices-phone')
      await page.goto(`${serverUrl()}/admin/gateways/mail`)
      await page.waitForSelector('[data-outcome=refused]')
      await shot(page, 'gateways-12-mail-phone')

      assert.deepEqual(errors, [])
      assert.deepEqual(fcm.rejected, [])
      await context.close()
    })
    .timeout(300_000)
})
