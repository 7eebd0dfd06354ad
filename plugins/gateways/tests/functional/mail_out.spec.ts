import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { OutboxService } from '#core/outbox/outbox_service'
import { waitFor } from '#tests/helpers/queue'
import gatewaysConfig from '#plugins/gateways/config'
import { MailOutService } from '#plugins/gateways/services/mail_out/mail_out_service'
import {
  startSmtpRelay,
  useRelay,
  type SmtpRelay,
} from '#plugins/gateways/tests/helpers/smtp_relay'

/** Writes one mail through the outbox as a caller does (its transaction, jobs after commit). */
async function enqueueMail(mail: { to: string; subject: string; notBefore?: number }) {
  const [outbox, mailOut] = await Promise.all([
    app.container.make(OutboxService),
    app.container.make(MailOutService),
  ])
  const key = `mail-test:${randomUUID()}`
  const afterCommit: (() => unknown)[] = []
  await db.transaction((trx) =>
    outbox.enqueue(
      trx,
      [
        mailOut.entry({
          ...mail,
          text: 'Hello',
          html: '<p>Hello</p>',
          headers: { 'X-Test': 'yes' },
          idempotencyKey: key,
          eventType: 'test',
        }),
      ],
      (callback) => afterCommit.push(callback)
    )
  )
  for (const callback of afterCommit) await callback()
  return key
}

const row = (key: string) =>
  db.from('outbox_deliveries').where('channel', 'mail').where('idempotency_key', key).first()

/** Waits until the delivery is finished, or has made `attempts` attempts. */
function settled(key: string, attempts?: number) {
  return waitFor(
    async () => {
      const found = await row(key)
      if (!found) return false
      if (attempts !== undefined)
        return Number(found.attempts) >= attempts && found.state !== 'sending' && found
      return ['delivered', 'failed', 'cancelled'].includes(found.state) && found
    },
    20_000,
    `the mail ${key}`
  )
}

test.group('gateways: e-mail out (the mail channel)', (group) => {
  let relay: SmtpRelay
  let account: { user: string; password: string }
  let restore: () => void
  group.setup(async () => {
    const started = await startSmtpRelay()
    relay = started.relay
    account = started.account
    restore = useRelay(relay, account)
    const outbox = await app.container.make(OutboxService)
    const backoff = { ...outbox.settings.backoff }
    outbox.settings.backoff.baseMs = 30
    outbox.settings.backoff.maxMs = 100
    return async () => {
      restore()
      Object.assign(outbox.settings.backoff, backoff)
      await relay.close()
    }
  })

  test('a mail reaches the relay with its text, HTML, headers and a Message-ID from its key', async ({
    assert,
  }) => {
    const to = `ann.${randomUUID().slice(0, 8)}@example.test`
    const key = await enqueueMail({ to, subject: 'Hi' })
    const delivered = await settled(key)
    assert.equal(delivered.state, 'delivered')
    assert.equal(Number(delivered.last_status), 250)
    const [received] = relay.to(to)
    assert.equal(received.mail.subject, 'Hi')
    assert.equal(received.mail.text!.trim(), 'Hello')
    assert.equal(received.mail.html, '<p>Hello</p>')
    assert.equal(received.mail.headers.get('x-test'), 'yes')
    assert.equal(received.from, 'quire@quire.test')
    assert.match(received.mail.messageId!, /^<[0-9a-f]{32}@quire\.test>$/)
  })

  test('a 451 (try later) is retried and delivered once', async ({ assert }) => {
    const to = `bea.${randomUUID().slice(0, 8)}@example.test`
    relay.deferOnce.add(to)
    const key = await enqueueMail({ to, subject: 'Later' })
    const delivered = await settled(key)
    assert.equal(delivered.state, 'delivered')
    assert.equal(Number(delivered.attempts), 2)
    const attempts = await db
      .from('outbox_attempts')
      .where('delivery_id', delivered.id)
      .orderBy('attempt')
    assert.deepEqual(
      attempts.map((attempt) => [
        attempt.outcome,
        attempt.status === null ? null : Number(attempt.status),
      ]),
      [
        ['retry', 451],
        ['delivered', 250],
      ]
    )
    assert.lengthOf(relay.to(to), 1)
  })

  test('a refused login (535) is retried, not failed: the settings may be fixed', async ({
    assert,
  }) => {
    const password = gatewaysConfig.smtp.password
    gatewaysConfig.smtp.password = 'wrong'
    try {
      const to = `cid.${randomUUID().slice(0, 8)}@example.test`
      const key = await enqueueMail({ to, subject: 'Auth' })
      const waiting = await settled(key, 1)
      assert.notEqual(waiting.state, 'failed')
      assert.equal(Number(waiting.last_status), 535)
      assert.notInclude(String(waiting.last_error), 'wrong')
      assert.lengthOf(relay.to(to), 0)
      gatewaysConfig.smtp.password = password
      const delivered = await settled(key)
      assert.equal(delivered.state, 'delivered')
      assert.lengthOf(relay.to(to), 1)
    } finally {
      gatewaysConfig.smtp.password = password
    }
  })
})
