import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { waitFor } from '#tests/helpers/queue'
import { serverUrl } from '#tests/helpers/server'
import { login, TEST_PASSWORD } from '#tests/helpers/users'
import {
  book,
  client,
  clientFor,
  expectNok,
  sessionOf,
  sharedBook,
} from '#plugins/books/tests/helpers/books'
import { uniquePhone } from '#plugins/gateways/tests/helpers/gateways'
import {
  startSmtpRelay,
  useRelay,
  type SmtpRelay,
} from '#plugins/gateways/tests/helpers/smtp_relay'
import app from '@adonisjs/core/services/app'
import { UserService } from '#core/services/user_service'

let counter = 0
const newAddress = () => `invitee.${Date.now().toString(36)}${++counter}@Example.TEST`

/** The link the relay received for `address` (the newest mail), once it arrived. */
async function linkMailedTo(relay: SmtpRelay, address: string, count = 1) {
  const mails = await waitFor(
    () => relay.to(address.toLowerCase()).length >= count && relay.to(address.toLowerCase()),
    20_000,
    `${count} invitation mail(s) to ${address}`
  )
  const text = mails[count - 1].mail.text!
  const link = /(http\S+\/invite\/\S+)/.exec(text)?.[1]
  if (!link) throw new Error(`No link in ${text}`)
  return { link, mail: mails[count - 1].mail }
}

/** The link page of a link, fetched from the test server (the link's origin is the configured public URL). */
async function openLink(link: string) {
  const path = new URL(link).pathname
  const response = await fetch(`${serverUrl()}${path}`)
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    html: await response.text(),
  }
}

async function statusOf(link: string) {
  const { status } = await openLink(link)
  return status
}

async function htmlOf(link: string) {
  const { html } = await openLink(link)
  return html
}

async function accountWith(fields: { email?: string; phone?: string }) {
  const users = await app.container.make(UserService)
  const user = await users.create({
    code: `inv${Date.now().toString(36)}${++counter}`,
    password: TEST_PASSWORD,
    ...fields,
  })
  return clientFor(user, await login(user))
}

const pendingRows = (bookCode: string) =>
  db
    .from('book_address_invitations as i')
    .join('books as b', 'b.id', 'i.book_id')
    .where('b.code', bookCode)
    .select('i.*')

test.group('books: invitations to an address with no account', (group) => {
  let relay: SmtpRelay
  let restore: () => void
  group.setup(async () => {
    const started = await startSmtpRelay()
    relay = started.relay
    restore = useRelay(relay, started.account)
    return async () => {
      restore()
      await relay.close()
    }
  })

  test('an e-mail with no account gets the link; the page shows the book; the new account is invited', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice, { title: 'Hiking club' })
    const address = newAddress()
    const answer = await alice.call({ req: 'inviteMember', ...target, member: address, right: 3 })
    assert.equal(answer.status, 'ok')
    assert.isTrue(answer.pending)
    assert.deepEqual(answer.member, { kind: 'email', right: 3 })

    const [row] = await pendingRows(target.b_c)
    assert.equal(row.address, address.toLowerCase())
    const { link, mail } = await linkMailedTo(relay, address)
    assert.include(mail.subject!, 'Hiking club')
    const token = decodeURIComponent(link.split('/invite/')[1])
    // Only the token's hash is stored.
    assert.notInclude(JSON.stringify(row), token)

    const page = await openLink(link)
    assert.equal(page.status, 200)
    assert.include(page.type!, 'text/html')
    assert.include(page.html, 'Hiking club')
    assert.include(page.html, alice.code)
    const unknown = await openLink(`${link}x`)
    assert.equal(unknown.status, 404)
    assert.include(unknown.html, 'Invitation not found')

    // The account made with the address (any case) finds the invitation waiting.
    const invitee = await accountWith({ email: address.toUpperCase() })
    const books = await invitee.call({ req: 'getAllBooks' })
    const invited = books.allBooks.books.find((item: any) => item.b_c === target.b_c)
    assert.isOk(invited)
    assert.isTrue(invited.invited)
    assert.isFalse(invited.accepted)
    assert.lengthOf(await pendingRows(target.b_c), 0)
    assert.equal(await statusOf(link), 404)
    const accepted = await invitee.call({ req: 'acceptInvitation', ...target })
    assert.equal(accepted.status, 'ok')
  }).timeout(30_000)

  test('inviting the same address again refreshes the one invitation and sends a new link', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice)
    const address = newAddress()
    await alice.call({ req: 'inviteMember', ...target, member: address })
    const first = await linkMailedTo(relay, address, 1)
    const again = await alice.call({ req: 'inviteMember', ...target, member: address, right: 1 })
    assert.equal(again.status, 'ok')
    const second = await linkMailedTo(relay, address, 2)
    assert.notEqual(first.link, second.link)
    const rows = await pendingRows(target.b_c)
    assert.lengthOf(rows, 1)
    assert.equal(Number(rows[0].right), 1)
    // The older link is gone with its token.
    assert.equal(await statusOf(first.link), 404)
    assert.equal(await statusOf(second.link), 200)
  }).timeout(30_000)

  test('an expired invitation is a 404 page and is not given to the new account', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice)
    const address = newAddress()
    await alice.call({ req: 'inviteMember', ...target, member: address })
    const { link } = await linkMailedTo(relay, address)
    await db
      .from('book_address_invitations')
      .where('address', address.toLowerCase())
      .update({ expires_at: Date.now() - 1 })
    assert.equal(await statusOf(link), 404)
    const invitee = await accountWith({ email: address })
    const books = await invitee.call({ req: 'getAllBooks' })
    assert.isUndefined(books.allBooks.books.find((item: any) => item.b_c === target.b_c))
  }).timeout(30_000)

  test('a phone with no account gets an SMS with the link; the account with the number is invited', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice, { title: 'Choir' })
    const phone = uniquePhone()
    const spaced = `${phone.slice(0, 3)} ${phone.slice(3, 4)} ${phone.slice(4)}`
    const answer = await alice.call({ req: 'inviteMember', ...target, member: spaced })
    assert.equal(answer.status, 'ok')
    assert.deepEqual(answer.member, { kind: 'phone', right: 2 })
    const [sms] = await db
      .from('gateways_sms_outbox')
      .where('phone', phone)
      .where('kind', 'invitation')
    assert.include(sms.text, 'Choir')
    const link = /(http\S+\/invite\/\S+)/.exec(sms.text)![1]
    assert.include(await htmlOf(link), 'Choir')

    const invitee = await accountWith({ phone })
    const books = await invitee.call({ req: 'getAllBooks' })
    assert.isTrue(books.allBooks.books.find((item: any) => item.b_c === target.b_c)?.invited)
  }).timeout(30_000)

  test('bad addresses, members without the right and restricted sessions store and send nothing', async ({
    assert,
  }) => {
    const {
      owner,
      members: [writer],
      target,
    } = await sharedBook(3)
    const stranger = await client()
    const readonly = await sessionOf(owner, 'readonly')
    const address = newAddress()
    for (const member of ['not@an address', 'a@b', '@example.test', '+12 3', '+1234567890123456'])
      expectNok(
        assert,
        await owner.call({ req: 'inviteMember', ...target, member }),
        'INVALID_PARAMETER'
      )
    expectNok(
      assert,
      await writer.call({ req: 'inviteMember', ...target, member: address }),
      'FORBIDDEN'
    )
    expectNok(
      assert,
      await stranger.call({ req: 'inviteMember', ...target, member: address }),
      'NOT_FOUND'
    )
    expectNok(
      assert,
      await readonly.call({ req: 'inviteMember', ...target, member: address }),
      'READONLY_SESSION'
    )
    assert.lengthOf(await pendingRows(target.b_c), 0)
    const deliveries = await db.from('outbox_deliveries').where('recipient', address.toLowerCase())
    assert.lengthOf(deliveries, 0)
  }).timeout(30_000)
})
