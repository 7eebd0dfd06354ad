import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { waitFor } from '#tests/helpers/queue'
import { book, client, send, share, type Client } from '#plugins/books/tests/helpers/books'
import gatewaysConfig from '#plugins/gateways/config'
import { CopyService } from '#plugins/gateways/services/copies/copy_service'
import { StampService } from '#core/services/stamp_service'
import { uniquePhone, withPhone } from '#plugins/gateways/tests/helpers/gateways'
import {
  startSmtpRelay,
  useRelay,
  type SmtpRelay,
} from '#plugins/gateways/tests/helpers/smtp_relay'

const DOMAIN = 'books.quire.test'

/** A new owner's book shared with `count` new members who accepted. */
async function sharedWith(count: number, extra: Record<string, unknown> = {}) {
  const owner = await client()
  const target = await book(owner, extra)
  const members: Client[] = []
  for (let index = 0; index < count; index++) {
    const member = await client()
    await share(owner, target, member)
    members.push(member)
  }
  return { owner, target, members }
}

async function prefs(who: Client, target: { b_o: string; b_c: string }, userPrefs: object) {
  const answer = await who.call({
    req: 'updateBookUserPrefs',
    ...target,
    userPrefs: JSON.stringify(userPrefs),
  })
  if (answer.status !== 'ok') throw new Error(`updateBookUserPrefs: ${JSON.stringify(answer)}`)
}

/** The mail deliveries of a message's copies, once every one is finished. */
async function settledCopies(smid: number, count: number) {
  return waitFor(
    async () => {
      const rows = await db
        .from('outbox_deliveries')
        .where('channel', 'mail')
        .where('idempotency_key', 'like', `copy:${smid}:%`)
      return (
        rows.length === count &&
        rows.every((row) => ['delivered', 'failed', 'cancelled'].includes(row.state)) &&
        rows
      )
    },
    20_000,
    `the ${count} copies of message ${smid}`
  )
}

test.group('gateways: copies of new messages by e-mail and SMS', (group) => {
  let relay: SmtpRelay
  let restore: () => void
  let savedDomain: string | undefined
  group.setup(async () => {
    const started = await startSmtpRelay()
    relay = started.relay
    restore = useRelay(relay, started.account)
    savedDomain = gatewaysConfig.mailIn.domain
    gatewaysConfig.mailIn.domain = DOMAIN
    return async () => {
      restore()
      gatewaysConfig.mailIn.domain = savedDomain
      await relay.close()
    }
  })

  test('a member asking for e-mail copies gets each new message; the sender and the others do not', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2, { title: 'Groceries' })
    await prefs(bob, target, { notifyEmailCopy: true })
    // The sender asked too: never a copy of one's own message.
    await prefs(owner, target, { notifyEmailCopy: true })

    const sent = await send(owner, target, 'buy milk\nand bread')
    const [delivery] = await settledCopies(sent.createMessageId, 1)
    assert.equal(delivery.state, 'delivered')

    const [copy] = relay.to(bob.user.email!)
    assert.equal(copy.mail.subject, '[Groceries] buy milk')
    assert.include(copy.mail.text!, 'buy milk\nand bread')
    assert.include(copy.mail.text!, 'Reply to this e-mail to answer in the book.')
    assert.equal(copy.mail.replyTo!.value[0].address, `${target.b_c}.${target.b_o}@${DOMAIN}`)
    assert.equal(copy.mail.from!.value[0].address, 'quire@quire.test')
    assert.equal(copy.mail.headers.get('auto-submitted'), 'auto-generated')
    assert.equal(copy.mail.headers.get('x-quire-message'), String(sent.createMessageId))
    assert.match(copy.mail.messageId!, /^<[0-9a-f]{32}@quire\.test>$/)
    assert.lengthOf(relay.to(owner.user.email!), 0)
    assert.lengthOf(relay.to(carol.user.email!), 0)
    assert.deepEqual(relay.logins.at(-1), { user: 'quire', password: 'relay-secret' })

    // The same uuid sent again is the same message: no second copy.
    await send(owner, target, 'buy milk\nand bread', { uuid: sent.uuid })
    const second = await send(owner, target, 'and eggs')
    await settledCopies(second.createMessageId, 1)
    assert.deepEqual(
      relay.to(bob.user.email!).map((item) => item.mail.subject),
      ['[Groceries] buy milk', '[Groceries] and eggs']
    )
  }).timeout(30_000)

  test('sends to a book where nobody asks for copies are single statements; one member asking brings back the transaction and the copy', async ({
    assert,
    cleanup,
  }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    // Which StampService path each batch of sends took (the service is the container's one).
    const stamps = await app.container.make(StampService)
    const taken: string[] = []
    const { write, writeNative, writeStatement } = stamps
    stamps.write = ((...args: Parameters<typeof write>) => {
      taken.push('knex transaction')
      return write.apply(stamps, args)
    }) as typeof write
    // The staged batch's transaction is begun on the driver: its contributors use plain statements.
    stamps.writeNative = ((...args: Parameters<typeof writeNative>) => {
      taken.push('transaction')
      return writeNative.apply(stamps, args)
    }) as typeof writeNative
    stamps.writeStatement = ((...args: Parameters<typeof writeStatement>) => {
      taken.push('statement')
      return writeStatement.apply(stamps, args)
    }) as typeof writeStatement
    cleanup(() => {
      stamps.write = write
      stamps.writeNative = writeNative
      stamps.writeStatement = writeStatement
    })

    const before = await Promise.all(['one', 'two', 'three'].map((msg) => send(owner, target, msg)))
    assert.isNotEmpty(taken)
    assert.deepEqual([...new Set(taken)], ['statement'])
    assert.lengthOf(
      await db.from('book_messages').whereIn(
        'smid',
        before.map((sent) => sent.createMessageId)
      ),
      3
    )

    await prefs(bob, target, { notifyEmailCopy: true })
    taken.length = 0
    const sent = await send(owner, target, 'four')
    assert.deepEqual(taken, ['transaction'])
    const [delivery] = await settledCopies(sent.createMessageId, 1)
    assert.equal(delivery.state, 'delivered')
    assert.deepEqual(
      relay.to(bob.user.email!).map((item) => item.mail.subject),
      [`[${target.b_c}] four`]
    )
  }).timeout(30_000)

  test('in an archived book only members with notifyWhenMsgInArchivedBook get copies', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2)
    await prefs(bob, target, { notifyEmailCopy: true })
    await prefs(carol, target, { notifyEmailCopy: true, notifyWhenMsgInArchivedBook: true })
    const sent = await send(owner, target, 'last words')
    await settledCopies(sent.createMessageId, 2)
    const archived = await owner.call({ req: 'archiveBook', ...target })
    assert.equal(archived.status, 'ok')
    // An archived book takes no message from its members; the copies a message
    // there would cause are computed as in the writer's transaction.
    const copies = await app.container.make(CopyService)
    const row = await db.from('book_messages').where('smid', sent.createMessageId).first()
    const entries = await db.transaction((trx) =>
      copies.copiesOf(
        {
          kind: 'created',
          bookId: Number(row.book_id),
          b_o: target.b_o,
          b_c: target.b_c,
          row,
          actorId: owner.user.id,
          onBehalfOf: null,
          stamp: Number(row.sstamp),
        },
        trx,
        () => {}
      )
    )
    assert.deepEqual(
      entries.map((entry) => entry.recipient),
      [carol.user.email!.toLowerCase()]
    )
  }).timeout(30_000)

  test('an address the relay refuses (550) fails at once, and the message is stored', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    await prefs(bob, target, { notifyEmailCopy: true })
    relay.refuse.add(bob.user.email!.toLowerCase())

    const sent = await send(owner, target, 'to nobody')
    const [delivery] = await settledCopies(sent.createMessageId, 1)
    assert.equal(delivery.state, 'failed')
    assert.equal(Number(delivery.attempts), 1)
    assert.equal(Number(delivery.last_status), 550)
    const stored = await db.from('book_messages').where('smid', sent.createMessageId).first()
    assert.equal(stored.msg, 'to nobody')
  }).timeout(30_000)

  test('SMTP not configured: no mail entry is written', async ({ assert }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    await prefs(bob, target, { notifyEmailCopy: true })
    const host = gatewaysConfig.smtp.host
    gatewaysConfig.smtp.host = undefined
    try {
      const sent = await send(owner, target, 'nowhere')
      const rows = await db
        .from('outbox_deliveries')
        .where('channel', 'mail')
        .where('idempotency_key', 'like', `copy:${sent.createMessageId}:%`)
      assert.lengthOf(rows, 0)
    } finally {
      gatewaysConfig.smtp.host = host
    }
  })

  test('a member asking for SMS copies gets one queued for the gateways, in the message transaction', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2, { title: 'Team' })
    await prefs(bob, target, { notifySmsCopy: true })
    await withPhone(bob, uniquePhone())
    await withPhone(carol, uniquePhone())
    await prefs(carol, target, { notifySmsCopy: false, notifyEmailCopy: true })

    const sent = await send(owner, target, 'meeting moved')
    const rows = await db
      .from('gateways_sms_outbox')
      .where('idempotency_key', 'like', `copy:${sent.createMessageId}:%`)
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].kind, 'copy')
    assert.equal(rows[0].phone, bob.user.phone)
    assert.isNotNull(rows[0].book_id)
    assert.isTrue(rows[0].text.startsWith('Team: '))
    assert.include(rows[0].text, 'meeting moved')
    // Carol asked for e-mail copies only.
    await settledCopies(sent.createMessageId, 1)
    assert.lengthOf(relay.to(carol.user.email!), 1)
  })
})
