import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { attached, ensureSocketEndpoint } from './socket_client.js'
import { invite, member, memberOf, messagesOf, sharedBook } from './fixtures.js'
import app from '@adonisjs/core/services/app'
import emitter from '@adonisjs/core/services/emitter'
import { login } from '#tests/helpers/users'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import type { TestSocket } from './socket_client.js'

const access = await app.container.make(BookAccessService)

/** A ping answered: every frame the server sent this socket before has arrived. */
async function roundTrip(socket: TestSocket) {
  socket.send({ type: 9 })
  const pong = await socket.ofType(10)
  if (pong.status !== 'ok') throw new Error(`ping refused: ${JSON.stringify(pong)}`)
}

const isMessage = (uuid: string) => (frame: Record<string, any>) =>
  frame.type === 1 && frame.uuid === uuid

test.group('socket: send message (type 1)', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('a new message is acked (type 2) after commit and pushed as type 1 to the other members', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const carol = await member()
    const book = await sharedBook(alice, [bob, carol])
    const [aliceSocket, bobSocket, carolSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
      attached(carol.session),
    ])

    const uuid = randomUUID()
    // As real clients send it: b_c, b_o, smid 0, a client uuid, no version.
    aliceSocket.send({
      type: 1,
      updatedAt: Date.now(),
      del: false,
      uuid,
      smid: 0,
      msg: 'hello over the socket',
      ...book,
    })
    const ack = await aliceSocket.ofType(2)
    assert.equal(ack.status, 'ok')
    assert.equal(ack.uuid, uuid)
    assert.isAbove(ack.smid, 0)
    assert.isNumber(ack.sstamp)
    assert.isNumber(ack.created)
    assert.isFalse(ack.del)

    // Committed by the time the ack left: visible at once, with the acked smid.
    const row = await db.from('book_messages').where('uuid', uuid).first()
    assert.equal(Number(row.smid), ack.smid)
    const listed = await messagesOf(bob, book)
    assert.equal(listed[0].smid, ack.smid)
    assert.isAtLeast(ack.sstamp, Number(row.sstamp))

    for (const socket of [bobSocket, carolSocket]) {
      const pushed = await socket.next(isMessage(uuid))
      assert.equal(pushed.smid, ack.smid)
      assert.equal(pushed.u_c, alice.code)
      assert.equal(pushed.msg, 'hello over the socket')
      assert.isFalse(pushed.del)
      assert.equal(pushed.created, ack.created)
      assert.equal(pushed.b_o, book.b_o)
      assert.equal(pushed.b_c, book.b_c)
      // and book updates ready, addressed to the recipient
      const ready = await socket.ofType(8)
      assert.equal(ready.u_c, socket === bobSocket ? bob.code : carol.code)
    }
    // The sender's socket has its ack, not a copy of its own message.
    assert.isTrue(await aliceSocket.none(isMessage(uuid)))
    await Promise.all([aliceSocket, bobSocket, carolSocket].map((socket) => socket.close()))
  })

  test("the sender's other devices get the message; non-members get nothing", async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const stranger = await member()
    const book = await sharedBook(alice, [bob])
    const secondDevice = memberOf(alice.user, await login(alice.user))
    const [phone, laptop, strangerSocket] = await Promise.all([
      attached(alice.session),
      attached(secondDevice.session),
      attached(stranger.session),
    ])
    const uuid = randomUUID()
    phone.send({ type: 1, uuid, smid: 0, msg: 'from my phone', ...book })
    await phone.ofType(2)
    const copy = await laptop.next(isMessage(uuid))
    assert.equal(copy.msg, 'from my phone')
    assert.isTrue(await strangerSocket.none((frame) => frame.type === 1 || frame.type === 8))
    await Promise.all([phone, laptop, strangerSocket].map((socket) => socket.close()))
  })

  test('membership changes apply to the very next message: who joins gets it, who is removed does not', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const carol = await member()
    const book = await sharedBook(alice, [bob])
    const [aliceSocket, bobSocket, carolSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
      attached(carol.session),
    ])
    const send = async (msg: string) => {
      const uuid = randomUUID()
      aliceSocket.send({ type: 1, uuid, smid: 0, msg, ...book })
      const ack = await aliceSocket.next((frame) => frame.type === 2 && frame.uuid === uuid)
      assert.equal(ack.status, 'ok')
      return uuid
    }
    // The book's members are now known to the fan-out (and kept).
    const first = await send('before carol joins')
    await bobSocket.next(isMessage(first))
    assert.isTrue(await carolSocket.none(isMessage(first)))

    await invite(alice, book, carol, 2, true)
    const second = await send('carol is a member now')
    const reached = await carolSocket.next(isMessage(second))
    assert.equal(reached.msg, 'carol is a member now')
    await bobSocket.next(isMessage(second))

    const removed = await alice.call({ req: 'removeMember', ...book, member: bob.code })
    assert.equal(removed.status, 'ok')
    const third = await send('bob was removed')
    await carolSocket.next(isMessage(third))
    assert.isTrue(await bobSocket.none(isMessage(third)))
    await Promise.all([aliceSocket, bobSocket, carolSocket].map((socket) => socket.close()))
  })

  test('sends from several members at once: each sender gets the others messages, never its own', async ({
    assert,
  }) => {
    // Sends that arrive together may share one transaction (the books plugin's group
    // commit): each message must still leave out its own sender's socket, and only that one.
    const people = await Promise.all([member(), member(), member()])
    const book = await sharedBook(people[0], people.slice(1))
    const sockets = await Promise.all(people.map((person) => attached(person.session)))
    const sent = people.map(() => [] as string[])
    for (let round = 0; round < 5; round++) {
      sockets.forEach((socket, index) => {
        const uuid = randomUUID()
        sent[index].push(uuid)
        socket.send({ type: 1, uuid, smid: 0, msg: `burst ${round} from ${index}`, ...book })
      })
    }
    const all = sent.flat()
    for (const [index, socket] of sockets.entries()) {
      for (const uuid of all) {
        if (!sent[index].includes(uuid)) {
          await socket.next(isMessage(uuid), 5000)
          continue
        }
        const ack = await socket.next((frame) => frame.type === 2 && frame.uuid === uuid, 5000)
        assert.equal(ack.status, 'ok')
      }
    }
    for (const [index, socket] of sockets.entries()) {
      assert.isTrue(
        await socket.none((frame) => frame.type === 1 && sent[index].includes(frame.uuid)),
        `socket ${index} got one of its own messages`
      )
    }
    await Promise.all(sockets.map((socket) => socket.close()))
  })

  test('sending the same uuid again answers the same message (a retry after a lost ack)', async ({
    assert,
  }) => {
    const alice = await member()
    const book = await sharedBook(alice)
    const socket = await attached(alice.session)
    const uuid = randomUUID()
    socket.send({ type: 1, uuid, smid: 0, msg: 'once', ...book })
    const first = await socket.ofType(2)
    socket.send({ type: 1, uuid, smid: 0, msg: 'once', ...book })
    const second = await socket.ofType(2)
    assert.equal(second.smid, first.smid)
    const count = await db.from('book_messages').where('uuid', uuid).count('* as total')
    assert.equal(Number(count[0].total), 1)
    await socket.close()
  })

  test('an edit (smid > 0) is acked and pushed with the new text', async ({ assert }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const [aliceSocket, bobSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
    ])
    const uuid = randomUUID()
    aliceSocket.send({ type: 1, uuid, smid: 0, msg: 'draft', ...book })
    const created = await aliceSocket.ofType(2)
    await bobSocket.next(isMessage(uuid))
    aliceSocket.send({ type: 1, uuid, smid: created.smid, msg: 'final', ...book })
    const edited = await aliceSocket.ofType(2)
    assert.equal(edited.status, 'ok')
    assert.equal(edited.smid, created.smid)
    const pushed = await bobSocket.next(isMessage(uuid))
    assert.equal(pushed.msg, 'final')
    const listed = await messagesOf(bob, book)
    assert.equal(listed[0].msg, 'final')
    await Promise.all([aliceSocket.close(), bobSocket.close()])
  })

  test('del true deletes: ack with del true, pushed with del true, gone from the book', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const [aliceSocket, bobSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
    ])
    const uuid = randomUUID()
    aliceSocket.send({ type: 1, uuid, smid: 0, msg: 'to be deleted', ...book })
    const created = await aliceSocket.ofType(2)
    await bobSocket.next(isMessage(uuid))

    aliceSocket.send({ type: 1, uuid, smid: created.smid, del: true, msg: '', ...book })
    const ack = await aliceSocket.ofType(2)
    assert.equal(ack.status, 'ok')
    assert.isTrue(ack.del)
    assert.equal(ack.smid, created.smid)
    const pushed = await bobSocket.next(isMessage(uuid))
    assert.isTrue(pushed.del)
    assert.equal(pushed.smid, created.smid)
    assert.equal(pushed.u_c, alice.code)
    assert.deepEqual(await messagesOf(bob, book), [])
    await Promise.all([aliceSocket.close(), bobSocket.close()])
  })

  test('del given as the string "true" (and the uuid alone) deletes too', async ({ assert }) => {
    const alice = await member()
    const book = await sharedBook(alice)
    const socket = await attached(alice.session)
    const uuid = randomUUID()
    socket.send({ type: 1, uuid, smid: 0, msg: 'x', ...book })
    await socket.ofType(2)
    socket.send({ type: 1, uuid, smid: 0, del: 'true', ...book })
    const ack = await socket.ofType(2)
    assert.equal(ack.status, 'ok', JSON.stringify(ack))
    assert.isTrue(ack.del)
    await socket.close()
  })

  test('a message sent with api.php sendMsg reaches the members sockets, the sender included', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const [aliceSocket, bobSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
    ])
    const uuid = randomUUID()
    const answer = await alice.call({ req: 'sendMsg', ...book, msg: 'over http', uuid })
    assert.equal(answer.status, 'ok')
    for (const socket of [aliceSocket, bobSocket]) {
      const pushed = await socket.next(isMessage(uuid))
      assert.equal(pushed.smid, answer.createMessageId)
    }
    await Promise.all([aliceSocket.close(), bobSocket.close()])
  })

  test('refusals are acks with status nok and nothing is written', async ({ assert }) => {
    const alice = await member()
    const stranger = await member()
    const readonly = memberOf(alice.user, await login(alice.user, { restrictions: 'readonly' }))
    const book = await sharedBook(alice)
    const [strangerSocket, readonlySocket, aliceSocket] = await Promise.all([
      attached(stranger.session),
      attached(readonly.session),
      attached(alice.session),
    ])

    const cases: [typeof aliceSocket, Record<string, unknown>, string][] = [
      [strangerSocket, { msg: 'intruder', ...book }, 'NOT_FOUND'],
      [readonlySocket, { msg: 'read only', ...book }, 'READONLY_SESSION'],
      [aliceSocket, { msg: 'no such book', b_o: alice.code, b_c: 'nosuchbook' }, 'NOT_FOUND'],
      [aliceSocket, { msg: '', ...book }, 'MISSING_PARAMETER'],
      [aliceSocket, { msg: { not: 'text' }, ...book }, 'INVALID_PARAMETER'],
      [aliceSocket, { msg: 'x', smid: 'abc', ...book }, 'INVALID_PARAMETER'],
      [aliceSocket, { msg: 'x', del: 'maybe', ...book }, 'INVALID_PARAMETER'],
      [aliceSocket, { msg: 'x'.repeat(70_000), ...book }, 'INVALID_PARAMETER'],
      [aliceSocket, { msg: 'x', smid: 999999999, ...book }, 'NOT_FOUND'],
    ]
    for (const [socket, fields, code] of cases) {
      const uuid = randomUUID()
      socket.send({ type: 1, uuid, smid: 0, ...fields })
      const ack = await socket.ofType(2)
      assert.equal(ack.status, 'nok', JSON.stringify(fields).slice(0, 80))
      assert.equal(ack.errorCode, code, JSON.stringify(ack))
      assert.isString(ack.errorMsg)
      assert.equal(ack.uuid, uuid)
      const written = await db.from('book_messages').where('uuid', uuid).first()
      assert.isNull(written ?? null)
    }
    // Every connection is still usable.
    for (const socket of [strangerSocket, readonlySocket, aliceSocket]) {
      socket.send({ type: 9 })
      const pong = await socket.ofType(10)
      assert.equal(pong.status, 'ok')
    }
    await Promise.all([strangerSocket, readonlySocket, aliceSocket].map((socket) => socket.close()))
  })

  test('a session hiding messages may not send them', async ({ assert }) => {
    const alice = await member()
    const book = await sharedBook(alice)
    const hidden = memberOf(alice.user, await login(alice.user, { restrictions: 'hideMessages' }))
    const socket = await attached(hidden.session)
    socket.send({ type: 1, uuid: randomUUID(), smid: 0, msg: 'x', ...book })
    const ack = await socket.ofType(2)
    assert.equal(ack.errorCode, 'RESTRICTED_SESSION')
    await socket.close()
  })
})

test.group('socket: book updates ready (type 8)', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('every member gets type 8 addressed to them when the book changes through api.php', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const [aliceSocket, bobSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
    ])
    const answer = await alice.call({ req: 'updateBook', ...book, title: 'Renamed' })
    assert.equal(answer.status, 'ok')
    assert.deepEqual(await aliceSocket.ofType(8), { type: 8, u_c: alice.code })
    assert.deepEqual(await bobSocket.ofType(8), { type: 8, u_c: bob.code })
    await Promise.all([aliceSocket.close(), bobSocket.close()])
  })

  test('an invited user is told (type 8) before accepting', async ({ assert }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice)
    const bobSocket = await attached(bob.session)
    const invited = await alice.call({ req: 'inviteMember', ...book, member: bob.code, right: 2 })
    assert.equal(invited.status, 'ok')
    const ready = await bobSocket.ofType(8)
    assert.equal(ready.u_c, bob.code)
    await bobSocket.close()
  })

  test('several changes close together give exactly one type 8 per socket', async ({ assert }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const bookRef = (await access.resolve(book.b_o, book.b_c))!
    const bobSocket = await attached(bob.session)
    const changed = () =>
      emitter.emit('books:book_updated', { book: bookRef, changes: ['title'], actorId: null })

    // A barrier: the type 8 of a change made now leaves with (or after) whatever the set-up's
    // changes still had pending for bob (they share the members read and the coalescing window).
    await changed()
    await bobSocket.ofType(8)
    await roundTrip(bobSocket)
    bobSocket.frames.length = 0

    // Three changes of the book in one turn of the event loop, as the books binding receives
    // them after commit: they fall in one coalescing window, whatever the machine's load.
    await Promise.all([changed(), changed(), changed()])
    assert.deepEqual(await bobSocket.ofType(8), { type: 8, u_c: bob.code })
    // The window's flush sends all its frames at once: a second type 8 would have been written
    // to the socket before the answer to a ping sent now.
    await roundTrip(bobSocket)
    assert.deepEqual(
      bobSocket.frames.filter((frame) => frame.type === 8),
      [],
      'a second type 8 for one window'
    )
    await bobSocket.close()
  })
})
