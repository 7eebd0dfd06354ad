import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { attached, ensureSocketEndpoint } from './socket_client.js'
import { invite, member, memberOf, sharedBook } from './fixtures.js'
import { login } from '#tests/helpers/users'

const isSystem = (msg: string) => (frame: Record<string, any>) =>
  frame.type === 11 && frame.msg === msg

async function membership(bookOwner: string, bookCode: string, userId: number) {
  return db
    .from('book_members as m')
    .join('books as b', 'b.id', 'm.book_id')
    .join('users as o', 'o.id', 'b.owner_id')
    .where('o.code', bookOwner)
    .where('b.code', bookCode)
    .where('m.user_id', userId)
    .select('m.*')
    .first()
}

test.group('socket: system messages (type 11)', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('acceptInvitation: ack 12, the user becomes a member, the members get type 11', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice)
    await invite(alice, book, bob)
    const [aliceSocket, bobSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
    ])

    const uuid = randomUUID()
    bobSocket.send({ type: 11, version: '6.49', uuid, msg: 'acceptInvitation', ...book })
    const ack = await bobSocket.ofType(12)
    assert.deepEqual(ack, { type: 12, status: 'ok', uuid })
    const row = await membership(book.b_o, book.b_c, bob.user.id)
    assert.equal(row.invite, 'accepted')

    const told = await aliceSocket.next(isSystem('acceptInvitation'))
    assert.equal(told.u_c, bob.code)
    assert.equal(told.b_o, book.b_o)
    assert.equal(told.b_c, book.b_c)
    // and the book changed for every member
    await aliceSocket.ofType(8)
    await Promise.all([aliceSocket.close(), bobSocket.close()])
  })

  test("clearNotRead: the member's read mark moves to the newest message; their other devices are told", async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const sent = await alice.call({ req: 'sendMsg', ...book, msg: 'unread for bob' })
    assert.equal(sent.status, 'ok')
    const bobLaptop = memberOf(bob.user, await login(bob.user))
    const [phone, laptop, aliceSocket] = await Promise.all([
      attached(bob.session),
      attached(bobLaptop.session),
      attached(alice.session),
    ])

    phone.send({ type: 11, uuid: randomUUID(), msg: 'clearNotRead', ...book })
    const ack = await phone.ofType(12)
    assert.equal(ack.status, 'ok')
    const row = await membership(book.b_o, book.b_c, bob.user.id)
    assert.equal(Number(row.last_msg_read), sent.createMessageId)
    assert.equal(Number(row.nb_not_read), 0)

    const told = await laptop.next(isSystem('clearNotRead'))
    assert.equal(told.u_c, bob.code)
    assert.equal(told.b_c, book.b_c)
    assert.isTrue(await phone.none(isSystem('clearNotRead')))
    assert.isTrue(await aliceSocket.none(isSystem('clearNotRead')))
    await Promise.all([phone, laptop, aliceSocket].map((socket) => socket.close()))
  })

  test('logOpenBook: the opening is recorded, read-only sessions included', async ({ assert }) => {
    const alice = await member()
    const book = await sharedBook(alice)
    const readonly = memberOf(alice.user, await login(alice.user, { restrictions: 'readonly' }))
    const [socket, other] = await Promise.all([attached(readonly.session), attached(alice.session)])
    socket.send({ type: 11, uuid: 'open-1', msg: 'logOpenBook', ...book })
    const ack = await socket.ofType(12)
    assert.equal(ack.status, 'ok', JSON.stringify(ack))
    const row = await membership(book.b_o, book.b_c, alice.user.id)
    assert.isAbove(Number(row.last_open_at), 0)
    await other.next(isSystem('logOpenBook'))
    await Promise.all([socket.close(), other.close()])
  })

  test("updateBookParam: a member's own parameter goes to their devices; a book-wide one to every member", async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const aliceTablet = memberOf(alice.user, await login(alice.user))
    const [aliceSocket, tablet, bobSocket] = await Promise.all([
      attached(alice.session),
      attached(aliceTablet.session),
      attached(bob.session),
    ])

    aliceSocket.send({
      type: 11,
      uuid: 'fav',
      msg: 'updateBookParam',
      param: 'favorite',
      value: 'true',
      ...book,
    })
    const ack1 = await aliceSocket.ofType(12)

    assert.equal(ack1.status, 'ok')
    const own = await membership(book.b_o, book.b_c, alice.user.id)
    assert.isTrue(Boolean(own.favorite))
    const onTablet = await tablet.next(isSystem('updateBookParam'))
    assert.equal(onTablet.param, 'favorite')
    assert.isTrue(await bobSocket.none(isSystem('updateBookParam')))

    aliceSocket.send({
      type: 11,
      uuid: 'title',
      msg: 'updateBookParam',
      param: 'title',
      value: 'New title',
      ...book,
    })
    const ack2 = await aliceSocket.ofType(12)

    assert.equal(ack2.status, 'ok')
    const toBob = await bobSocket.next(isSystem('updateBookParam'))
    assert.equal(toBob.param, 'title')
    assert.equal(toBob.value, 'New title')
    assert.equal(toBob.u_c, alice.code)
    const info = await bob.call({ req: 'getBookInfo', ...book })
    assert.equal(info.book.ownerPrefs.title, 'New title')

    // A member without the admin right may not change a book-wide parameter.
    bobSocket.send({
      type: 11,
      uuid: 'nope',
      msg: 'updateBookParam',
      param: 'title',
      value: 'Hijack',
      ...book,
    })
    const refused = await bobSocket.ofType(12)
    assert.equal(refused.status, 'nok')
    assert.equal(refused.errorCode, 'FORBIDDEN')
    assert.equal(refused.uuid, 'nope')
    await Promise.all([aliceSocket, tablet, bobSocket].map((socket) => socket.close()))
  })

  test("updateUserInfo: the user's parameter is stored and their other devices get it", async ({
    assert,
  }) => {
    const alice = await member()
    const laptopSession = await login(alice.user)
    const [phone, laptop] = await Promise.all([attached(alice.session), attached(laptopSession)])
    phone.send({ type: 11, uuid: 'name', msg: 'updateUserInfo', param: 'fname', value: 'Alicia' })
    const ack3 = await phone.ofType(12)

    assert.equal(ack3.status, 'ok')
    const row = await db.from('users').where('id', alice.user.id).first()
    assert.equal(row.first_name, 'Alicia')
    const told = await laptop.next(isSystem('updateUserInfo'))
    assert.deepInclude(told, { u_c: alice.code, param: 'fname', value: 'Alicia' })
    const info = await alice.call({ req: 'getUserInfo' })
    assert.equal(info.userInfo.userPrefs.fname, 'Alicia')
    await Promise.all([phone.close(), laptop.close()])
  })

  test('refusals: ack 12 with status nok and a documented code, nothing changed', async ({
    assert,
  }) => {
    const alice = await member()
    const stranger = await member()
    const book = await sharedBook(alice)
    const socket = await attached(stranger.session)
    const cases: [Record<string, unknown>, string][] = [
      [{ msg: 'noSuchMessage' }, 'UNKNOWN_MESSAGE_TYPE'],
      [{}, 'MISSING_PARAMETER'],
      [{ msg: 'clearNotRead' }, 'MISSING_PARAMETER'],
      [{ msg: 'clearNotRead', ...book }, 'NOT_FOUND'],
      [{ msg: 'acceptInvitation', ...book }, 'NOT_FOUND'],
      [{ msg: 'updateUserInfo', param: 'mail1', value: 'x@example.test' }, 'INVALID_PARAMETER'],
      [{ msg: 'updateUserInfo', param: 'nbCol', value: 'many' }, 'INVALID_PARAMETER'],
      [{ msg: 'updateBookParam', param: 'favorite', value: 'true', ...book }, 'NOT_FOUND'],
    ]
    for (const [fields, code] of cases) {
      const uuid = randomUUID()
      socket.send({ type: 11, uuid, ...fields })
      const ack = await socket.ofType(12)
      assert.equal(ack.status, 'nok', JSON.stringify(fields))
      assert.equal(ack.errorCode, code, JSON.stringify(ack))
      assert.equal(ack.uuid, uuid)
    }
    const row = await membership(book.b_o, book.b_c, stranger.user.id)
    assert.isNull(row ?? null)
    await socket.close()
  })
})
