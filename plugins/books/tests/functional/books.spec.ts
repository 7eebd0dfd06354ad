import { test } from '@japa/runner'
import { rpc } from '#tests/helpers/rpc'
import {
  book,
  client,
  expectNok,
  flushCounters,
  send,
  sessionOf,
  share,
  pick,
} from '../helpers/books.js'

test.group('createBook', () => {
  test('creates a book owned by u_c, with the owner as its first member (right 4)', async ({
    assert,
  }) => {
    const alice = await client()
    const answer = await alice.call({
      req: 'createBook',
      b_c: 'projects',
      title: 'Projects',
      description: 'All of them',
    })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.isNumber(answer.sstamp)
    const created = answer.book
    assert.strictEqual(created.b_o, alice.code)
    assert.strictEqual(created.b_c, 'projects')
    assert.strictEqual(created.ownerPrefs.title, 'Projects')
    assert.strictEqual(created.description, 'All of them')
    assert.strictEqual(created.accepted, true)
    assert.strictEqual(created.right, 4)
    assert.deepEqual(created.members, [
      { u_c: alice.code, invite: 'accepted', right: 4, access: 4, apiRight: '1' },
    ])
  })

  test('title defaults to b_c; owner prefs may come as JSON or flat parameters', async ({
    assert,
  }) => {
    const alice = await client()
    const plain = await alice.call({ req: 'createBook', b_c: 'plain' })
    assert.strictEqual(plain.book.ownerPrefs.title, 'plain')
    const json = await alice.call({
      req: 'createBook',
      b_c: 'json',
      ownerPrefs: JSON.stringify({ oCoverColor: 'red', acceptExternalMsg: true }),
    })
    assert.strictEqual(json.book.ownerPrefs.oCoverColor, 'red')
    assert.strictEqual(json.book.ownerPrefs.acceptExternalMsg, true)
    const flat = await alice.call(
      { req: 'createBook', b_c: 'flat', oCoverType: 'color', authorizeMemberBroadcast: '1' },
      'multipart'
    )
    assert.strictEqual(flat.book.ownerPrefs.oCoverType, 'color')
    assert.strictEqual(flat.book.ownerPrefs.authorizeMemberBroadcast, true)
  })

  test('a code used twice by the same owner is a CONFLICT; other owners may reuse it', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    await alice.call({ req: 'createBook', b_c: 'dup' })
    expectNok(assert, await alice.call({ req: 'createBook', b_c: 'dup' }), 'CONFLICT')
    assert.equal(pick(await bob.call({ req: 'createBook', b_c: 'dup' }), 'status'), 'ok')
  })

  test('bad codes and missing codes are refused', async ({ assert }) => {
    const alice = await client()
    expectNok(assert, await alice.call({ req: 'createBook' }), 'MISSING_PARAMETER')
    expectNok(
      assert,
      await alice.call({ req: 'createBook', b_c: 'has space' }),
      'INVALID_PARAMETER'
    )
    expectNok(assert, await alice.call({ req: 'createBook', b_c: 'a/b' }), 'INVALID_PARAMETER')
    expectNok(
      assert,
      await alice.call({ req: 'createBook', b_c: 'x', ownerPrefs: '{"nope":1}' }),
      'INVALID_PARAMETER'
    )
    expectNok(
      assert,
      await alice.call({ req: 'createBook', b_c: 'y', ownerPrefs: 'not json' }),
      'INVALID_PARAMETER'
    )
  })

  test('read-only and book-restricted sessions cannot create books', async ({ assert }) => {
    const alice = await client()
    const target = await book(alice)
    const readonly = await sessionOf(alice, 'readonly')
    expectNok(assert, await readonly.call({ req: 'createBook', b_c: 'other' }), 'READONLY_SESSION')
    const restricted = await sessionOf(alice, JSON.stringify({ carnet_code: target.b_c }))
    expectNok(
      assert,
      await restricted.call({ req: 'createBook', b_c: target.b_c }),
      'RESTRICTED_SESSION'
    )
  })
})

test.group('getAllBooks', () => {
  test('lists books with JSON types as clients decode them, contacts and counts', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice, { title: 'Shared' })
    await book(bob)
    await share(alice, target, bob, 3)
    await send(alice, target, 'first')
    await send(alice, target, 'second', { body: 'an e-mail body', bodyHtml: '<b>html</b>' })

    for (const form of ['get', 'json', 'multipart'] as const) {
      const answer = await bob.call({ req: 'getAllBooks' }, form)
      assert.equal(answer.status, 'ok', JSON.stringify(answer))
      assert.isNumber(answer.sstamp)
      const all = answer.allBooks
      assert.strictEqual(all.nbBooks, 2)
      assert.strictEqual(all.nbContacts, 1)
      assert.deepEqual(all.contacts, [
        {
          u_c: alice.code,
          lastName: alice.user.lastName,
          firstName: alice.user.firstName,
          sstamp: all.contacts[0].sstamp,
          isConfirmed: true,
        },
      ])
      assert.isNumber(all.contacts[0].sstamp)
      const shared = all.books.find((entry: any) => entry.b_c === target.b_c)
      assert.strictEqual(shared.b_o, alice.code)
      assert.strictEqual(shared.nbMsgs, 2)
      assert.strictEqual(shared.nbNotRead, 2)
      assert.strictEqual(shared.nbMembers, 2)
      assert.strictEqual(shared.contact_u_c, alice.code)
      assert.strictEqual(shared.right, 3)
      assert.strictEqual(shared.accepted, true)
      assert.strictEqual(shared.favorite, false)
      assert.strictEqual(shared.archived, false)
      assert.strictEqual(shared.del, false)
      assert.strictEqual(shared.ownerPrefs.title, 'Shared')
      assert.strictEqual(shared.lastMsg.msg, 'second')
      assert.strictEqual(shared.lastMsg.msgBody, '')
      assert.strictEqual(shared.lastMsg.msgBodyHtml, '')
      assert.notProperty(shared.lastMsg, 'msgBodyHTML')
      assert.strictEqual(shared.lastMsg.b_c, target.b_c)
      assert.strictEqual(shared.lastMsg.b_o, alice.code)
      assert.isAtLeast(shared.sstamp, shared.lastMsg.sstamp)
    }
  })

  test('getUserInfo.nbBooks counts the books the user belongs to', async ({ assert }) => {
    const alice = await client()
    await book(alice)
    await book(alice)
    const info = await alice.call({ req: 'getUserInfo' })
    assert.strictEqual(info.userInfo.nbBooks, 2)
  })

  test('with sstamp: only books changed since, and totals stay totals', async ({ assert }) => {
    const alice = await client()
    const quiet = await book(alice)
    const busy = await book(alice)
    const first = await alice.call({ req: 'getAllBooks' })
    const since = first.sstamp

    const none = await alice.call({ req: 'getAllBooks', sstamp: since })
    assert.deepEqual(none.allBooks.books, [])
    assert.strictEqual(none.allBooks.nbBooks, 2)
    assert.deepEqual(none.allBooks.contacts, [])

    await send(alice, busy, 'new message')
    const delta = await alice.call({ req: 'getAllBooks', sstamp: since })
    assert.deepEqual(
      delta.allBooks.books.map((entry: any) => entry.b_c),
      [busy.b_c]
    )
    assert.isAbove(delta.sstamp, since)

    // An edit and a delete are changes too.
    const later = delta.sstamp
    const listed = await alice.call({ req: 'getBookMessages', ...busy })
    await alice.call({
      req: 'sendMsg',
      ...busy,
      msg_id: listed.bookMessages[0].smid,
      msg: 'edited',
    })
    const edited = await alice.call({ req: 'getAllBooks', sstamp: later })
    assert.deepEqual(
      edited.allBooks.books.map((entry: any) => entry.b_c),
      [busy.b_c]
    )
    assert.strictEqual(edited.allBooks.books[0].lastMsg.msg, 'edited')

    await alice.call({ req: 'updateBookUserPrefs', ...quiet, favorite: 1 })
    const favorite = await alice.call({ req: 'getAllBooks', sstamp: edited.sstamp })
    assert.deepEqual(
      favorite.allBooks.books.map((entry: any) => entry.b_c),
      [quiet.b_c]
    )
    assert.strictEqual(favorite.allBooks.books[0].favorite, true)
  })

  test('a book the user left or lost appears with del true in a delta, and not in a full list', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const left = await book(alice)
    const lost = await book(alice)
    await share(alice, left, bob)
    await share(alice, lost, bob)
    const since = pick(await bob.call({ req: 'getAllBooks' }), 'sstamp')

    assert.equal(pick(await bob.call({ req: 'leaveBook', ...left }), 'status'), 'ok')
    assert.equal(
      pick(await alice.call({ req: 'removeMember', ...lost, member: bob.code }), 'status'),
      'ok'
    )

    const delta = await bob.call({ req: 'getAllBooks', sstamp: since })
    const entries = delta.allBooks.books.sort((a: any, b: any) => a.sbid - b.sbid)
    assert.deepEqual(
      entries.map((entry: any) => [entry.b_c, entry.del]),
      [
        [left.b_c, true],
        [lost.b_c, true],
      ]
    )
    assert.deepEqual(entries[0].members, [])
    assert.isNull(entries[0].lastMsg)
    assert.strictEqual(delta.allBooks.nbBooks, 0)

    const full = await bob.call({ req: 'getAllBooks' })
    assert.deepEqual(full.allBooks.books, [])
  })

  test('b_c and b_o keep a single book', async ({ assert }) => {
    const alice = await client()
    const bob = await client()
    const mine = await book(alice)
    await book(alice)
    const bobs = await book(bob)
    await share(bob, bobs, alice)
    const one = await alice.call({ req: 'getAllBooks', b_c: mine.b_c, b_o: alice.code })
    assert.deepEqual(
      one.allBooks.books.map((entry: any) => entry.b_c),
      [mine.b_c]
    )
    assert.strictEqual(one.allBooks.nbBooks, 3)
    const byOwner = await alice.call({ req: 'getAllBooks', b_o: bob.code })
    assert.deepEqual(
      byOwner.allBooks.books.map((entry: any) => entry.b_c),
      [bobs.b_c]
    )
    const empty = await alice.call({ req: 'getAllBooks', b_c: '' })
    assert.lengthOf(empty.allBooks.books, 3)
  })

  test('a session restricted to one book lists only that book; hideMessages hides lastMsg', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice)
    await book(alice)
    await send(alice, target, 'secret')
    const restricted = await sessionOf(
      alice,
      JSON.stringify({ carnet_code: target.b_c, carnet_owner: alice.code })
    )
    const answer = await restricted.call({ req: 'getAllBooks' })
    assert.deepEqual(
      answer.allBooks.books.map((entry: any) => entry.b_c),
      [target.b_c]
    )
    expectNok(
      assert,
      await restricted.call({ req: 'getAllBooks', b_c: 'other' }),
      'RESTRICTED_SESSION'
    )

    const hidden = await sessionOf(alice, 'hideMessages')
    const listing = await hidden.call({ req: 'getAllBooks', b_c: target.b_c })
    assert.isNull(listing.allBooks.books[0].lastMsg)
  })

  test('counters stay right before and after they are folded into the book row', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await share(alice, target, bob)
    for (let index = 0; index < 3; index++) await send(alice, target, `a${index}`)
    await send(bob, target, 'from bob')
    const check = async (nbMsgs: number, aliceUnread: number, bobUnread: number) => {
      const forAlice = pick(await alice.call({ req: 'getBookInfo', ...target }), 'book')
      const forBob = pick(await bob.call({ req: 'getBookInfo', ...target }), 'book')
      assert.strictEqual(forAlice.nbMsgs, nbMsgs)
      assert.strictEqual(forBob.nbMsgs, nbMsgs)
      assert.strictEqual(forAlice.nbNotRead, aliceUnread)
      assert.strictEqual(forBob.nbNotRead, bobUnread)
    }
    await check(4, 1, 3)
    await flushCounters()
    await check(4, 1, 3)

    const messages = pick(await bob.call({ req: 'getBookMessages', ...target }), 'bookMessages')
    // A counted message deleted, then a new (uncounted) one deleted.
    await alice.call({ req: 'deleteMsg', ...target, msg_id: messages[messages.length - 1].smid })
    await check(3, 1, 2)
    const fresh = await send(alice, target, 'soon deleted')
    await check(4, 1, 3)
    await alice.call({ req: 'deleteMsg', ...target, msg_id: fresh.createMessageId })
    await check(3, 1, 2)
    await flushCounters()
    await check(3, 1, 2)

    await bob.call({ req: 'markBooksMessagesAsRead', ...target })
    await check(3, 1, 0)
    await send(alice, target, 'after read')
    await check(4, 1, 1)
    await flushCounters()
    await check(4, 1, 1)
  })
})

test.group('getBookInfo', () => {
  test('a member and an invitee see the book; anyone else gets NOT_FOUND, as for a missing book', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const eve = await client()
    const target = await book(alice)
    await alice.call({ req: 'inviteMember', ...target, member: bob.code })

    const own = await alice.call({ req: 'getBookInfo', ...target })
    assert.strictEqual(own.book.b_c, target.b_c)
    const invited = await bob.call({ req: 'getBookInfo', ...target })
    assert.strictEqual(invited.book.accepted, false)
    assert.strictEqual(invited.book.invited, true)

    const stranger = await eve.call({ req: 'getBookInfo', ...target })
    const missing = await eve.call({ req: 'getBookInfo', b_o: alice.code, b_c: 'nothing-here' })
    expectNok(assert, stranger, 'NOT_FOUND')
    expectNok(assert, missing, 'NOT_FOUND')
    assert.strictEqual(stranger.errorMsg, missing.errorMsg)
  })

  test('b_o defaults to u_c; b_c is required', async ({ assert }) => {
    const alice = await client()
    const target = await book(alice)
    assert.strictEqual(
      pick(await alice.call({ req: 'getBookInfo', b_c: target.b_c }), 'book.b_c'),
      target.b_c
    )
    expectNok(assert, await alice.call({ req: 'getBookInfo' }), 'MISSING_PARAMETER')
  })

  test('without a session: MISSING_PARAMETER, never a book', async ({ assert }) => {
    const answer = await rpc({ req: 'getBookInfo', b_o: 'x', b_c: 'y' })
    assert.equal(answer.body.status, 'nok')
  })
})

test.group('updateBook, archive and user prefs', () => {
  test('an administrator updates title, description and owner prefs; others may not', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await share(alice, target, bob, 3)
    const answer = await alice.call({
      req: 'updateBook',
      ...target,
      title: 'Renamed',
      description: 'New',
      oCoverColor: 'blue',
    })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.strictEqual(answer.book.ownerPrefs.title, 'Renamed')
    assert.strictEqual(answer.book.ownerPrefs.oCoverColor, 'blue')
    assert.strictEqual(answer.book.description, 'New')
    expectNok(assert, await bob.call({ req: 'updateBook', ...target, title: 'Mine' }), 'FORBIDDEN')
    expectNok(assert, await alice.call({ req: 'updateBook', ...target }), 'MISSING_PARAMETER')
    expectNok(
      assert,
      await alice.call({ req: 'updateBook', ...target, title: '' }),
      'INVALID_PARAMETER'
    )

    await alice.call({ req: 'setMemberRight', ...target, member: bob.code, right: 4 })
    assert.equal(
      pick(await bob.call({ req: 'updateBook', ...target, title: 'Co-admin' }), 'status'),
      'ok'
    )
  })

  test('an archived book is read-only until unarchived; only administrators switch it', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await share(alice, target, bob, 3)
    await send(bob, target, 'before')
    expectNok(assert, await bob.call({ req: 'archiveBook', ...target }), 'FORBIDDEN')
    const archived = await alice.call({ req: 'archiveBook', ...target })
    assert.strictEqual(archived.book.archived, true)
    expectNok(assert, await bob.call({ req: 'sendMsg', ...target, msg: 'during' }), 'FORBIDDEN')
    assert.lengthOf(pick(await bob.call({ req: 'getBookMessages', ...target }), 'bookMessages'), 1)
    assert.equal(pick(await alice.call({ req: 'archiveBook', ...target }), 'status'), 'ok')
    const unarchived = await alice.call({ req: 'unarchiveBook', ...target })
    assert.strictEqual(unarchived.book.archived, false)
    assert.equal(pick(await bob.call({ req: 'sendMsg', ...target, msg: 'after' }), 'status'), 'ok')
  })

  test("updateBookUserPrefs changes only the member's own prefs", async ({ assert }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    await share(alice, target, bob, 1)
    const answer = await bob.call({
      req: 'updateBookUserPrefs',
      ...target,
      userPrefs: { maxMsgsOffline: '25', syncWithHubic: 'true' },
      favorite: 'TRUE',
      order: '3',
    })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.strictEqual(answer.book.userPrefs.maxMsgsOffline, 25)
    assert.strictEqual(answer.book.userPrefs.syncWithStorage, true)
    assert.strictEqual(answer.book.userPrefs.syncWithHubic, true)
    assert.strictEqual(answer.book.favorite, true)
    assert.strictEqual(answer.book.order, 3)
    const flat = await bob.call({ req: 'updateBookUserPrefs', ...target, notifyMobile: 'false' })
    assert.strictEqual(flat.book.userPrefs.notifyMobile, false)
    const forAlice = await alice.call({ req: 'getBookInfo', ...target })
    assert.strictEqual(forAlice.book.userPrefs.maxMsgsOffline, 500)
    assert.strictEqual(forAlice.book.favorite, false)
    expectNok(
      assert,
      await bob.call({ req: 'updateBookUserPrefs', ...target, userPrefs: { bogus: 1 } }),
      'INVALID_PARAMETER'
    )
    expectNok(
      assert,
      await bob.call({ req: 'updateBookUserPrefs', ...target }),
      'MISSING_PARAMETER'
    )
    expectNok(
      assert,
      await bob.call({ req: 'updateBookUserPrefs', ...target, maxMsgsOffline: 'lots' }),
      'INVALID_PARAMETER'
    )
  })
})
