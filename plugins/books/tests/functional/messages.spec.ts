import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import emitter from '@adonisjs/core/services/emitter'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { readQuery } from '#core/native_sql'
import { StampService } from '#core/services/stamp_service'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import { MAX_SEARCH_LENGTH } from '#plugins/books/services/message_queries'
import { ALL_FORMS } from '#tests/helpers/rpc'
import { book, client, expectNok, send, sessionOf, share, pick } from '../helpers/books.js'

const [stamps, bookAccess] = await Promise.all([
  app.container.make(StampService),
  app.container.make(BookAccessService),
])

const smids = (messages: any[]) => messages.map((message) => message.smid)

test.group('sendMsg', () => {
  test('answers createMessageId, created, uuid and sstamp in every transport form', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice)
    for (const form of ALL_FORMS) {
      const answer = await alice.call({ req: 'sendMsg', ...target, msg: `via ${form}` }, form)
      assert.equal(answer.status, 'ok', `${form}: ${JSON.stringify(answer)}`)
      assert.isNumber(answer.createMessageId)
      assert.isAbove(answer.createMessageId, 0)
      assert.isNumber(answer.created)
      assert.isString(answer.uuid)
      assert.isNumber(answer.sstamp)
    }
    const messages = pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages')
    assert.lengthOf(messages, ALL_FORMS.length)
  })

  test('b_o defaults to u_c and b_c to the first word of msg', async ({ assert }) => {
    const alice = await client()
    await alice.call({ req: 'createBook', b_c: 'groceries' })
    const answer = await alice.call({ req: 'sendMsg', msg: 'groceries milk and eggs' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const messages = pick(
      await alice.call({ req: 'getBookMessages', b_c: 'groceries' }),
      'bookMessages'
    )
    assert.strictEqual(messages[0].msg, 'groceries milk and eggs')
    expectNok(assert, await alice.call({ req: 'sendMsg', msg: 'nosuchbook hello' }), 'NOT_FOUND')
    expectNok(assert, await alice.call({ req: 'sendMsg', msg: '' }), 'MISSING_PARAMETER')
  })

  test('without b_o, a book of that code shared with the sender is found', async ({ assert }) => {
    const alice = await client()
    const bob = await client()
    await alice.call({ req: 'createBook', b_c: 'family' })
    await share(alice, { b_o: alice.code, b_c: 'family' }, bob)
    const answer = await bob.call({ req: 'sendMsg', b_c: 'family', msg: 'hi all' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const messages = pick(
      await alice.call({ req: 'getBookMessages', b_c: 'family' }),
      'bookMessages'
    )
    assert.strictEqual(messages[0].u_c, bob.code)
  })

  test('body, HTML body, counts, type, method and color are stored', async ({ assert }) => {
    const alice = await client()
    const target = await book(alice)
    await send(alice, target, 'subject', {
      body: 'plain body',
      bodyHtml: '<p>html</p>',
      nbMedias: 2,
      nbDocs: 1,
      msgType: 'm',
      msgMethod: '_mail',
      msgColor: 'green',
    })
    const [message] = pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages')
    assert.strictEqual(message.msgBody, 'plain body')
    assert.strictEqual(message.msgBodyHTML, '<p>html</p>')
    assert.strictEqual(message.nbMedias, 2)
    assert.strictEqual(message.nbDocs, 1)
    assert.strictEqual(message.msgMethod, '_mail')
    assert.strictEqual(message.msgColor, 'green')
    assert.strictEqual(message.u_c, alice.code)
  })

  test('a custom uuid is kept; sending it again answers the same message (idempotent)', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await share(alice, target, bob)
    const first = await send(alice, target, 'once', { uuid: 'client-uuid-1' })
    assert.strictEqual(first.uuid, 'client-uuid-1')
    const again = await send(alice, target, 'once', { uuid: 'client-uuid-1' })
    assert.strictEqual(again.createMessageId, first.createMessageId)
    const byUid = await send(alice, target, 'uid form', { uid: 'client-uuid-2' })
    assert.strictEqual(byUid.uuid, 'client-uuid-2')
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages'),
      2
    )
    expectNok(
      assert,
      await bob.call({ req: 'sendMsg', ...target, msg: 'x', uuid: 'client-uuid-1' }),
      'CONFLICT'
    )
    expectNok(
      assert,
      await alice.call({ req: 'sendMsg', ...target, msg: 'x', uuid: 'bad uuid with spaces' }),
      'INVALID_PARAMETER'
    )
  })

  test('concurrent sends of one uuid store one message', async ({ assert }) => {
    const alice = await client()
    const target = await book(alice)
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        alice.call({ req: 'sendMsg', ...target, msg: 'retry', uuid: 'same-uuid' })
      )
    )
    assert.isTrue(
      answers.every((answer) => answer.status === 'ok'),
      JSON.stringify(answers)
    )
    assert.lengthOf(new Set(answers.map((answer) => answer.createMessageId)), 1)
  })

  test('editing with msg_id: the creator, or RIGHT_READWRITEDELETE', async ({ assert }) => {
    const alice = await client()
    const writer = await client()
    const deleter = await client()
    const target = await book(alice)
    await share(alice, target, writer, 2)
    await share(alice, target, deleter, 3)
    const sent = await send(alice, target, 'original')
    const edited = await alice.call({
      req: 'sendMsg',
      ...target,
      msg_id: sent.createMessageId,
      msg: 'edited',
      body: 'new body',
    })
    assert.equal(edited.status, 'ok', JSON.stringify(edited))
    assert.strictEqual(edited.createMessageId, sent.createMessageId)
    expectNok(
      assert,
      await writer.call({ req: 'sendMsg', ...target, msg_id: sent.createMessageId, msg: 'hijack' }),
      'FORBIDDEN'
    )
    assert.equal(
      pick(
        await deleter.call({
          req: 'sendMsg',
          ...target,
          msg_id: sent.createMessageId,
          msg: 'moderated',
        }),
        'status'
      ),
      'ok'
    )
    const [message] = pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages')
    assert.strictEqual(message.msg, 'moderated')
    assert.strictEqual(message.msgBody, 'new body')
    assert.isAtLeast(message.lastModified, message.created)
    expectNok(
      assert,
      await alice.call({ req: 'sendMsg', ...target, msg_id: 999999999, msg: 'x' }),
      'NOT_FOUND'
    )
  })

  test('read-only rights, read-only sessions and hidden messages cannot send', async ({
    assert,
  }) => {
    const alice = await client()
    const reader = await client()
    const target = await book(alice)
    await share(alice, target, reader, 1)
    expectNok(assert, await reader.call({ req: 'sendMsg', ...target, msg: 'x' }), 'FORBIDDEN')
    const readonly = await sessionOf(alice, 'readonly')
    expectNok(
      assert,
      await readonly.call({ req: 'sendMsg', ...target, msg: 'x' }),
      'READONLY_SESSION'
    )
    const hidden = await sessionOf(alice, 'hideMessages')
    expectNok(
      assert,
      await hidden.call({ req: 'sendMsg', ...target, msg: 'x' }),
      'RESTRICTED_SESSION'
    )
    expectNok(
      assert,
      await hidden.call({ req: 'getBookMessages', ...target }),
      'RESTRICTED_SESSION'
    )
  })

  test('a session restricted to a book writes there by default, and nowhere else', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice)
    const other = await book(alice)
    const restricted = await sessionOf(alice, JSON.stringify({ carnet_code: target.b_c }))
    const answer = await restricted.call({ req: 'sendMsg', msg: 'no b_c given' })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages'),
      1
    )
    expectNok(
      assert,
      await restricted.call({ req: 'sendMsg', ...other, msg: 'x' }),
      'RESTRICTED_SESSION'
    )
    expectNok(
      assert,
      await restricted.call({ req: 'getBookMessages', ...other }),
      'RESTRICTED_SESSION'
    )
  })

  test('message events carry the wire message; a refused write emits nothing', async ({
    assert,
    cleanup,
  }) => {
    const alice = await client()
    const target = await book(alice)
    const fake = emitter.fake([
      'books:message_created',
      'books:message_deleted',
      'books:message_updated',
    ])
    cleanup(() => emitter.restore())
    const sent = await send(alice, target, 'evented')
    fake.assertEmitted(
      'books:message_created',
      ({ data }) =>
        data.message.smid === sent.createMessageId &&
        data.message.msg === 'evented' &&
        data.book.b_c === target.b_c
    )
    await alice.call({ req: 'sendMsg', ...target, msg_id: sent.createMessageId, msg: 'changed' })
    fake.assertEmitted('books:message_updated', ({ data }) => data.message.msg === 'changed')
    await alice.call({ req: 'deleteMsg', ...target, msg_id: sent.createMessageId })
    fake.assertEmitted(
      'books:message_deleted',
      ({ data }) =>
        data.smid === sent.createMessageId &&
        data.uuid === sent.uuid &&
        data.message.del === true &&
        data.message.msg === '' &&
        data.message.u_c === alice.code
    )
    // A refused write emits nothing.
    const before = fake.all().length
    await alice.call({ req: 'sendMsg', ...target, msg: '' })
    assert.strictEqual(fake.all().length, before)
  })
})

test.group('message events and transactions', () => {
  test('created, updated and deleted are emitted after commit', async ({ assert, cleanup }) => {
    const alice = await client()
    const target = await book(alice)
    // What a listener reads when the event arrives, on a connection of its own:
    // before the commit it would not see the change.
    const seen: string[] = []
    const committed = async (event: string, smid: number) => {
      const [row] = await readQuery('SELECT msg, del FROM book_messages WHERE smid = ?', [smid])
      seen.push(`${event}: ${row ? `${row.msg}${row.del ? ' (deleted)' : ''}` : 'not committed'}`)
    }
    cleanup(emitter.on('books:message_created', (data) => committed('created', data.message.smid)))
    cleanup(emitter.on('books:message_updated', (data) => committed('updated', data.message.smid)))
    cleanup(emitter.on('books:message_deleted', (data) => committed('deleted', data.smid)))
    const sent = await send(alice, target, 'first')
    await alice.call({ req: 'sendMsg', ...target, msg_id: sent.createMessageId, msg: 'second' })
    await alice.call({ req: 'deleteMsg', ...target, msg_id: sent.createMessageId })
    assert.deepEqual(seen, ['created: first', 'updated: second', 'deleted: second (deleted)'])
  })

  test('a write that rolls back emits nothing and leaves nothing', async ({ assert, cleanup }) => {
    const alice = await client()
    const target = await book(alice)
    const ref = (await bookAccess.resolve(target.b_o, target.b_c))!
    const fake = emitter.fake(['books:book_updated'])
    cleanup(() => emitter.restore())
    // The write every books service does: change rows, queue the event after the commit.
    const rename = (title: string, then: (trx: TransactionClientContract) => Promise<unknown>) =>
      stamps.write(async ({ trx, stamp, afterCommit }) => {
        await trx
          .from('books')
          .where('id', ref.id)
          .update({ owner_prefs: JSON.stringify({ title }), sstamp: stamp })
        afterCommit(() =>
          emitter.emit('books:book_updated', { book: ref, changes: ['title'], actorId: null })
        )
        await then(trx)
      })
    // A later statement of the same transaction fails: a second book with the same owner and code.
    const duplicate = (trx: TransactionClientContract) =>
      trx.table('books').insert({
        owner_id: alice.user.id,
        code: target.b_c,
        description: '',
        sstamp: 0,
        created_at: new Date(),
        updated_at: new Date(),
      })
    await assert.rejects(() => rename('rolled back', duplicate))
    fake.assertNotEmitted('books:book_updated')
    assert.strictEqual(
      pick(await alice.call({ req: 'getBookInfo', ...target }), 'book.ownerPrefs.title'),
      target.b_c
    )
    // The same write, committed, emits once: the fake would have seen it.
    await rename('committed', async () => {})
    fake.assertEmittedCount('books:book_updated', 1)
  })
})

test.group('deleteMsg', () => {
  test('the creator deletes; others need RIGHT_READWRITEDELETE; deleting twice is fine', async ({
    assert,
  }) => {
    const alice = await client()
    const writer = await client()
    const deleter = await client()
    const eve = await client()
    const target = await book(alice)
    await share(alice, target, writer, 2)
    await share(alice, target, deleter, 3)
    const mine = await send(writer, target, 'mine')
    const theirs = await send(alice, target, 'theirs')
    expectNok(
      assert,
      await writer.call({ req: 'deleteMsg', ...target, msg_id: theirs.createMessageId }),
      'FORBIDDEN'
    )
    expectNok(
      assert,
      await eve.call({ req: 'deleteMsg', ...target, msg_id: theirs.createMessageId }),
      'NOT_FOUND'
    )
    expectNok(
      assert,
      await eve.call({ req: 'deleteMsg', msg_id: theirs.createMessageId }),
      'NOT_FOUND'
    )
    assert.equal(
      pick(
        await writer.call({ req: 'deleteMsg', ...target, msg_id: mine.createMessageId }),
        'status'
      ),
      'ok'
    )
    const deleted = await deleter.call({
      req: 'deleteMsg',
      ...target,
      msg_id: theirs.createMessageId,
      msg: 'ignored',
    })
    assert.equal(deleted.status, 'ok')
    assert.isNumber(deleted.sstamp)
    assert.equal(
      pick(
        await deleter.call({ req: 'deleteMsg', ...target, msg_id: theirs.createMessageId }),
        'status'
      ),
      'ok'
    )
    assert.deepEqual(
      pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages'),
      []
    )
    expectNok(assert, await alice.call({ req: 'deleteMsg', ...target }), 'MISSING_PARAMETER')
    expectNok(
      assert,
      await alice.call({ req: 'deleteMsg', ...target, msg_id: 'abc' }),
      'INVALID_PARAMETER'
    )
    expectNok(
      assert,
      await alice.call({
        req: 'deleteMsg',
        b_o: alice.code,
        b_c: 'elsewhere',
        msg_id: mine.createMessageId,
      }),
      'NOT_FOUND'
    )
  })
})

test.group('getBookMessages (4.A.3)', (group) => {
  let alice: Awaited<ReturnType<typeof client>>
  let target: { b_o: string; b_c: string }
  let all: number[]

  group.setup(async () => {
    alice = await client()
    target = await book(alice)
    for (let index = 1; index <= 60; index++)
      await send(alice, target, index === 7 ? 'needle 100% here' : `message ${index}`)
    const everything = pick(
      await alice.call({ req: 'getBookMessages', ...target, nbMax: 100 }),
      'bookMessages'
    )
    all = smids(everything)
  })

  test('answers b_c, b_o and bookMessages, newest first', async ({ assert }) => {
    const answer = await alice.call({ req: 'getBookMessages', ...target })
    assert.strictEqual(answer.b_c, target.b_c)
    assert.strictEqual(answer.b_o, target.b_o)
    assert.isNumber(answer.sstamp)
    assert.isArray(answer.bookMessages)
    assert.lengthOf(all, 60)
    assert.deepEqual(
      all,
      [...all].sort((a, b) => b - a)
    )
  })

  test('rule 1: nbMax empty means 50', async ({ assert }) => {
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages'),
      50
    )
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...target, nbMax: '' }), 'bookMessages'),
      50
    )
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...target, nbMax: 7 }), 'bookMessages'),
      7
    )
    expectNok(
      assert,
      await alice.call({ req: 'getBookMessages', ...target, nbMax: -1 }),
      'INVALID_PARAMETER'
    )
  })

  test('rule 2: page p returns messages (p-1)*nbMax up to p*nbMax; past the end is empty', async ({
    assert,
  }) => {
    const page1 = smids(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, nbMax: 25, page: 1 }),
        'bookMessages'
      )
    )
    const page2 = smids(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, nbMax: 25, page: 2 }),
        'bookMessages'
      )
    )
    const page3 = smids(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, nbMax: 25, page: 3 }),
        'bookMessages'
      )
    )
    const page4 = smids(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, nbMax: 25, page: 4 }),
        'bookMessages'
      )
    )
    assert.deepEqual(page1, all.slice(0, 25))
    assert.deepEqual(page2, all.slice(25, 50))
    assert.deepEqual(page3, all.slice(50, 60))
    assert.deepEqual(page4, [])
    const defaultPage2 = smids(
      pick(await alice.call({ req: 'getBookMessages', ...target, page: 2 }), 'bookMessages')
    )
    assert.deepEqual(defaultPage2, all.slice(50))
  })

  test('rule 3: smidLast alone gives older messages; with smidFirst, newer OR older', async ({
    assert,
  }) => {
    const pivot = all[20]
    const older = smids(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, smidLast: pivot, nbMax: 100 }),
        'bookMessages'
      )
    )
    assert.deepEqual(
      older,
      all.filter((smid) => smid < pivot)
    )
    const first = all[10]
    const last = all[40]
    const outside = smids(
      pick(
        await alice.call({
          req: 'getBookMessages',
          ...target,
          smidFirst: first,
          smidLast: last,
          nbMax: 100,
        }),
        'bookMessages'
      )
    )
    assert.deepEqual(
      outside,
      all.filter((smid) => smid > first || smid < last)
    )
    const newer = smids(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, smidFirst: first, nbMax: 100 }),
        'bookMessages'
      )
    )
    assert.deepEqual(
      newer,
      all.filter((smid) => smid > first)
    )
    const paged = smids(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, smidLast: pivot, nbMax: 5, page: 2 }),
        'bookMessages'
      )
    )
    assert.deepEqual(paged, all.filter((smid) => smid < pivot).slice(5, 10))
  })

  test('rule 5: search_string keeps messages containing the text (wildcards are literal)', async ({
    assert,
  }) => {
    const found = pick(
      await alice.call({ req: 'getBookMessages', ...target, search_string: '100%' }),
      'bookMessages'
    )
    assert.deepEqual(
      found.map((message: any) => message.msg),
      ['needle 100% here']
    )
    assert.lengthOf(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, search_string: 'NEEDLE' }),
        'bookMessages'
      ),
      1
    )
    assert.lengthOf(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, search_string: '_' }),
        'bookMessages'
      ),
      0
    )
    assert.lengthOf(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, search_string: '!' }),
        'bookMessages'
      ),
      0
    )
    assert.lengthOf(
      pick(
        await alice.call({ req: 'getBookMessages', ...target, search_string: 'message 5' }),
        'bookMessages'
      ),
      11
    )
  })

  test('search_string: at most MAX_SEARCH_LENGTH characters, wildcards and all', async ({
    assert,
  }) => {
    // Every character a wildcard: the longest LIKE pattern the search can make.
    const widest = '%_'.repeat(MAX_SEARCH_LENGTH / 2)
    const answer = await alice.call({ req: 'getBookMessages', ...target, search_string: widest })
    assert.equal(answer.status, 'ok', JSON.stringify(answer).slice(0, 300))
    assert.deepEqual(answer.bookMessages, [])
    expectNok(
      assert,
      await alice.call({ req: 'getBookMessages', ...target, search_string: `${widest}%` }),
      'INVALID_PARAMETER'
    )
  })

  test('rule 4: with sstamp, changed messages of the range come too, unpaged, deleted ones included', async ({
    assert,
  }) => {
    const owner = await client()
    const place = await book(owner)
    const sent = []
    for (let index = 0; index < 8; index++)
      sent.push(pick(await send(owner, place, `m${index}`), 'createMessageId'))
    const since = pick(await owner.call({ req: 'getBookMessages', ...place }), 'sstamp')
    // Nothing changed: only the page.
    assert.lengthOf(
      pick(
        await owner.call({ req: 'getBookMessages', ...place, sstamp: since, nbMax: 2 }),
        'bookMessages'
      ),
      2
    )

    await owner.call({ req: 'sendMsg', ...place, msg_id: sent[0], msg: 'm0 edited' })
    await owner.call({ req: 'deleteMsg', ...place, msg_id: sent[1] })
    await owner.call({ req: 'sendMsg', ...place, msg_id: sent[5], msg: 'm5 edited' })
    const answer = await owner.call({ req: 'getBookMessages', ...place, sstamp: since, nbMax: 2 })
    const byId = new Map(answer.bookMessages.map((message: any) => [message.smid, message]))
    // Page (two newest live) + every change since, without paging.
    assert.sameMembers([...byId.keys()], [sent[7], sent[6], sent[5], sent[1], sent[0]])
    assert.deepEqual(
      smids(answer.bookMessages),
      [...smids(answer.bookMessages)].sort((a, b) => b - a)
    )
    assert.strictEqual((byId.get(sent[0]) as any).msg, 'm0 edited')
    assert.strictEqual((byId.get(sent[1]) as any).del, true)
    assert.strictEqual((byId.get(sent[1]) as any).msg, '')
    assert.isAbove((byId.get(sent[1]) as any).sstamp, since)

    // "In the smid range": changes outside smidLast..smidFirst are left out.
    const ranged = await owner.call({
      req: 'getBookMessages',
      ...place,
      sstamp: since,
      smidFirst: sent[4],
      smidLast: sent[1],
      nbMax: 1,
    })
    assert.sameMembers(smids(ranged.bookMessages), [sent[7], sent[1]])

    // Without sstamp, deleted messages are never listed.
    const plain = await owner.call({ req: 'getBookMessages', ...place, nbMax: 100 })
    assert.notInclude(smids(plain.bookMessages), sent[1])
  })

  test('a non-member, an invitee and a missing book all get NOT_FOUND', async ({ assert }) => {
    const eve = await client()
    const invitee = await client()
    await alice.call({ req: 'inviteMember', ...target, member: invitee.code })
    const stranger = await eve.call({ req: 'getBookMessages', ...target })
    expectNok(assert, stranger, 'NOT_FOUND')
    expectNok(assert, await invitee.call({ req: 'getBookMessages', ...target }), 'NOT_FOUND')
    const missing = await eve.call({ req: 'getBookMessages', b_o: alice.code, b_c: 'missing' })
    expectNok(assert, missing, 'NOT_FOUND')
    assert.strictEqual(stranger.errorMsg, missing.errorMsg)
    expectNok(
      assert,
      await eve.call({ req: 'getBookMessages', b_o: 'nobody', b_c: 'missing' }),
      'NOT_FOUND'
    )
  })
})

test.group('markBooksMessagesAsRead', () => {
  test('one book, up to a message, several books, or all books', async ({ assert }) => {
    const alice = await client()
    const bob = await client()
    const first = await book(alice)
    const second = await book(alice)
    await share(alice, first, bob)
    await share(alice, second, bob)
    const sent = []
    for (let index = 0; index < 4; index++)
      sent.push(pick(await send(alice, first, `f${index}`), 'createMessageId'))
    await send(alice, second, 's0')
    const unread = async (target: { b_o: string; b_c: string }) =>
      pick(await bob.call({ req: 'getBookInfo', ...target }), 'book')

    const partial = await bob.call({ req: 'markBooksMessagesAsRead', ...first, smid: sent[1] })
    assert.deepEqual(partial.books, [{ b_o: alice.code, b_c: first.b_c, lastMsgRead: sent[1] }])
    assert.strictEqual(pick(await unread(first), 'nbNotRead'), 2)
    assert.strictEqual(pick(await unread(first), 'lastMsgRead'), sent[1])
    // Never moves back.
    await bob.call({ req: 'markBooksMessagesAsRead', ...first, smid: sent[0] })
    assert.strictEqual(pick(await unread(first), 'lastMsgRead'), sent[1])

    const listed = await bob.call({
      req: 'markBooksMessagesAsRead',
      books: JSON.stringify([first, `${second.b_o}/${second.b_c}`]),
    })
    assert.lengthOf(listed.books, 2)
    assert.strictEqual(pick(await unread(first), 'nbNotRead'), 0)
    assert.strictEqual(pick(await unread(second), 'nbNotRead'), 0)

    await send(alice, first, 'again')
    await send(alice, second, 'again')
    const everything = await bob.call({ req: 'markBooksMessagesAsRead' })
    assert.lengthOf(everything.books, 2)
    assert.strictEqual(pick(await unread(first), 'nbNotRead'), 0)
    assert.strictEqual(pick(await unread(second), 'nbNotRead'), 0)

    const eve = await client()
    expectNok(assert, await eve.call({ req: 'markBooksMessagesAsRead', ...first }), 'NOT_FOUND')
  })
})

test.group('copyOrMoveMessage', () => {
  test('copies into another book, or moves (the original is deleted)', async ({ assert }) => {
    const alice = await client()
    const source = await book(alice)
    const target = await book(alice)
    const sent = await send(alice, source, 'travelling', { body: 'with a body' })

    const copied = await alice.call({
      req: 'copyOrMoveMessage',
      ...source,
      msg_id: sent.createMessageId,
      to_b_c: target.b_c,
    })
    assert.equal(copied.status, 'ok', JSON.stringify(copied))
    assert.notEqual(copied.createMessageId, sent.createMessageId)
    assert.strictEqual(copied.b_c, target.b_c)
    const inTarget = pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages')
    assert.deepEqual(
      inTarget.map((message: any) => [message.msg, message.msgBody]),
      [['travelling', 'with a body']]
    )
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...source }), 'bookMessages'),
      1
    )

    const moved = await alice.call({
      req: 'copyOrMoveMessage',
      msg_id: sent.createMessageId,
      to_b_o: alice.code,
      to_b_c: target.b_c,
      move: 1,
    })
    assert.equal(moved.status, 'ok', JSON.stringify(moved))
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...source }), 'bookMessages'),
      0
    )
    assert.lengthOf(
      pick(await alice.call({ req: 'getBookMessages', ...target }), 'bookMessages'),
      2
    )
    expectNok(
      assert,
      await alice.call({
        req: 'copyOrMoveMessage',
        msg_id: sent.createMessageId,
        to_b_c: target.b_c,
      }),
      'NOT_FOUND'
    )
    expectNok(
      assert,
      await alice.call({ req: 'copyOrMoveMessage', msg_id: moved.createMessageId }),
      'MISSING_PARAMETER'
    )
    expectNok(
      assert,
      await alice.call({
        req: 'copyOrMoveMessage',
        msg_id: moved.createMessageId,
        to_b_c: target.b_c,
        action: 'move',
      }),
      'INVALID_PARAMETER'
    )
  })

  test('reading the source and writing the target are required; moving needs the right to delete', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const source = await book(alice)
    const readonlyTarget = await book(alice)
    await share(alice, source, bob, 2)
    await share(alice, readonlyTarget, bob, 1)
    const own = await book(bob)
    const theirs = await send(alice, source, 'by alice')
    expectNok(
      assert,
      await bob.call({
        req: 'copyOrMoveMessage',
        ...source,
        msg_id: theirs.createMessageId,
        to_b_o: alice.code,
        to_b_c: readonlyTarget.b_c,
      }),
      'FORBIDDEN'
    )
    assert.equal(
      pick(
        await bob.call({
          req: 'copyOrMoveMessage',
          ...source,
          msg_id: theirs.createMessageId,
          to_b_c: own.b_c,
        }),
        'status'
      ),
      'ok'
    )
    expectNok(
      assert,
      await bob.call({
        req: 'copyOrMoveMessage',
        ...source,
        msg_id: theirs.createMessageId,
        to_b_c: own.b_c,
        move: 1,
      }),
      'FORBIDDEN'
    )
    const eve = await client()
    const eves = await book(eve)
    expectNok(
      assert,
      await eve.call({
        req: 'copyOrMoveMessage',
        msg_id: theirs.createMessageId,
        to_b_c: eves.b_c,
      }),
      'NOT_FOUND'
    )
  })
})
