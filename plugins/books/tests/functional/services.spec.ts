import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import { BookCountersService } from '#plugins/books/services/book_counters_service'
import { MessageService } from '#plugins/books/services/message_service'
import { insertMessages, type MessageFields } from '#plugins/books/services/message_writer'
import { StampService } from '#core/services/stamp_service'
import { SystemMessageService } from '#plugins/books/services/system_message_service'
import seedBooksDemo from '#plugins/books/database/demo'
import { login, makeUser } from '#tests/helpers/users'
import {
  actorOf,
  book,
  client,
  clientFor,
  send,
  sessionOf,
  share,
  sharedBook,
  pick,
} from '../helpers/books.js'
import { onMysql } from '#tests/helpers/database'

const [bookAccess, counters, messages, systemMessages, stamps] = await Promise.all([
  app.container.make(BookAccessService),
  app.container.make(BookCountersService),
  app.container.make(MessageService),
  app.container.make(SystemMessageService),
  app.container.make(StampService),
])

/** The Actor of a new session of `who`, with these restrictions (createSesskey's JSON form). */
const restrictedActor = async (who: Parameters<typeof sessionOf>[0], restrictions: object) =>
  actorOf(await sessionOf(who, JSON.stringify(restrictions)))

async function rejects(assert: any, promise: Promise<unknown>, code: string) {
  try {
    await promise
    assert.fail(`expected ${code}`)
  } catch (error: any) {
    assert.strictEqual(error.code, code, String(error?.stack ?? error))
  }
}

test.group('BookAccessService (the contract other plugins use)', () => {
  test('resolve, findById, rightOf, assert, resolveFor, memberUserIds', async ({ assert }) => {
    const {
      owner: alice,
      members: [bob],
      target,
    } = await sharedBook(2)
    const carol = await client()
    await alice.call({ req: 'inviteMember', ...target, member: carol.code })

    const ref = await bookAccess.resolve(target.b_o, target.b_c)
    assert.isNotNull(ref)
    assert.deepEqual(ref, {
      id: ref!.id,
      b_o: alice.code,
      b_c: target.b_c,
      ownerId: alice.user.id,
      archived: false,
    })
    assert.deepEqual(await bookAccess.findById(ref!.id), ref)
    assert.isNull(await bookAccess.resolve(target.b_o, 'nope'))
    assert.isNull(await bookAccess.findById(99_999_999))

    assert.strictEqual(await bookAccess.rightOf(alice.user.id, ref!.id), 4)
    assert.strictEqual(await bookAccess.rightOf(bob.user.id, ref!.id), 2)
    assert.isNull(
      await bookAccess.rightOf(carol.user.id, ref!.id),
      'an invitation is not membership'
    )
    assert.sameMembers(await bookAccess.memberUserIds(ref!.id), [alice.user.id, bob.user.id])
    const dave = await client()
    await share(alice, target, dave, 1)
    await dave.call({ req: 'leaveBook', ...target })
    assert.isNull(await bookAccess.rightOf(dave.user.id, ref!.id), 'a member who left has no right')
    assert.notInclude(await bookAccess.memberUserIds(ref!.id), dave.user.id)

    const asBob = await actorOf(bob)
    const asCarol = await actorOf(carol)
    await bookAccess.assert(asBob, ref!, 'write')
    await rejects(assert, bookAccess.assert(asBob, ref!, 'delete'), 'FORBIDDEN')
    await rejects(assert, bookAccess.assert(asBob, ref!, 'admin'), 'FORBIDDEN')
    await rejects(assert, bookAccess.assert(asCarol, ref!, 'read'), 'NOT_FOUND')
    await rejects(
      assert,
      bookAccess.assert(await restrictedActor(bob, { carnet_code: 'other' }), ref!, 'read'),
      'RESTRICTED_SESSION'
    )
    await rejects(
      assert,
      bookAccess.assert(await restrictedActor(bob, { readonly: true }), ref!, 'write'),
      'READONLY_SESSION'
    )
    await bookAccess.assert(
      await restrictedActor(bob, { carnet_code: target.b_c, carnet_owner: alice.code }),
      ref!,
      'read'
    )

    assert.deepEqual(
      await bookAccess.resolveFor(await actorOf(alice), target.b_o, target.b_c, 'admin'),
      ref
    )
    await rejects(
      assert,
      bookAccess.resolveFor(asCarol, target.b_o, 'missing', 'read'),
      'NOT_FOUND'
    )
    await rejects(
      assert,
      bookAccess.resolveFor(
        await restrictedActor(carol, { carnet_code: 'x' }),
        target.b_o,
        'missing',
        'read'
      ),
      'RESTRICTED_SESSION'
    )
  })
})

test.group('MessageService.send (the socket send message path)', () => {
  test('new, resend by uuid, edit by smid, delete with del', async ({ assert }) => {
    const alice = await client()
    const target = await book(alice)
    const actor = await actorOf(alice)
    const created = await messages.send(actor, {
      ...target,
      msg: 'from the socket',
      uuid: 'sock-1',
    })
    assert.isTrue(created.isNew)
    assert.strictEqual(created.message.msg, 'from the socket')
    const resent = await messages.send(actor, { ...target, msg: 'from the socket', uuid: 'sock-1' })
    assert.isFalse(resent.isNew)
    assert.strictEqual(resent.smid, created.smid)
    const edited = await messages.send(actor, { msg: 'edited', smid: created.smid })
    assert.strictEqual(edited.message.msg, 'edited')
    const deleted = await messages.send(actor, { ...target, smid: created.smid, del: true })
    assert.isTrue(deleted.del)
    assert.strictEqual(deleted.smid, created.smid)
    const byUuid = await messages.send(actor, { ...target, msg: 'second', uuid: 'sock-2' })
    const deletedByUuid = await messages.send(actor, { ...target, uuid: 'sock-2', del: true })
    assert.strictEqual(deletedByUuid.smid, byUuid.smid)
    assert.isTrue(deletedByUuid.del)
  })

  test('sends submitted together are each stored under their own smid; a taken uuid among them answers its first', async ({
    assert,
  }) => {
    const alice = await client()
    const target = await book(alice)
    const other = await book(alice)
    const actor = await actorOf(alice)
    // Sends submitted together wait for the transaction in flight and go in the next ones
    // (how many share one depends on timing); a repeated uuid fails a multi-row INSERT.
    for (const repeated of [false, true]) {
      const tag = `together-${Date.now().toString(36)}-${repeated}`
      const sends = Array.from({ length: 24 }, (_, index) => ({
        ...(index % 2 ? target : other),
        msg: `${tag} ${index}`,
        uuid: repeated && index % 8 === 0 ? `${tag}-repeated` : `${tag}-${index}`,
      }))
      const results = await Promise.all(sends.map((input) => messages.send(actor, input)))
      const stored = await db
        .from('book_messages')
        .where('uuid', 'like', `${tag}-%`)
        .select('smid', 'uuid', 'msg')
      const bySmid = new Map(stored.map((row) => [Number(row.smid), row]))
      for (const [index, result] of results.entries()) {
        const row = bySmid.get(result.smid)
        assert.exists(row, `send ${index}`)
        assert.equal(row.uuid, sends[index].uuid)
        assert.equal(result.message.msg, row.msg)
        if (!sends[index].uuid.endsWith('-repeated')) {
          assert.equal(row.msg, sends[index].msg)
          assert.isTrue(result.isNew)
        }
      }
      const distinct = new Set(sends.map((input) => `${input.b_c}:${input.uuid}`)).size
      assert.lengthOf(stored, distinct)
    }
  })

  test('insertMessages: one statement for a batch, each row under its own smid; a taken uuid sends its group row by row', async ({
    assert,
  }) => {
    const alice = await client()
    const [first, second] = [await book(alice), await book(alice)]
    const ids = await Promise.all(
      [first, second].map(async (ref) => (await bookAccess.resolve(ref.b_o, ref.b_c))!.id)
    )
    const tag = `batch-${Date.now().toString(36)}`
    const fields = (index: number, uuid = `${tag}-${index}`): MessageFields => ({
      book_id: ids[index % 2],
      uuid,
      creator_id: alice.user.id,
      pid: 0,
      msg: `${tag} ${index}`,
      msg_body: null,
      msg_body_html: null,
      msg_type: 'm',
      msg_method: '',
      msg_color: '',
      nb_comments: 0,
      last_comment_id: 0,
      nb_medias: 0,
      nb_email_cids: 0,
      nb_docs: 0,
      medias: null,
      has_event: false,
      del: false,
    })
    const insert = (list: MessageFields[]) =>
      stamps.write(({ trx, stamp }) => insertMessages(trx, stamp, list))
    const check = async (rows: Awaited<ReturnType<typeof insert>>, list: MessageFields[]) => {
      for (const [index, row] of rows.entries()) {
        if (!row) continue
        const [stored] = await db
          .from('book_messages')
          .where('smid', row.smid)
          .select('uuid', 'msg')
        assert.deepEqual(stored, { uuid: list[index].uuid, msg: list[index].msg })
      }
    }
    const batch = Array.from({ length: 6 }, (_, index) => fields(index))
    const rows = await insert(batch)
    assert.lengthOf(rows, 6)
    assert.isTrue(rows.every(Boolean))
    assert.lengthOf(new Set(rows.map((row) => row!.smid)), 6)
    await check(rows, batch)
    // The first book's uuid of message 0 is taken: that one answers null, the others are stored.
    const again = [fields(10), fields(12, `${tag}-0`), fields(14)]
    const mixed = await insert(again)
    assert.isNotNull(mixed[0])
    assert.isNull(mixed[1])
    assert.isNotNull(mixed[2])
    await check(mixed, again)
  })
})

test.group('system messages (SystemMessageService, called by the socket handlers)', () => {
  test('acceptInvitation, clearNotRead, logOpenBook', async ({ assert }) => {
    const alice = await client()
    const bob = await client()
    const target = await book(alice)
    const asBob = await actorOf(bob)
    await alice.call({ req: 'inviteMember', ...target, member: bob.code })
    await systemMessages.acceptInvitation(asBob, target)
    assert.strictEqual(
      pick(await bob.call({ req: 'getBookInfo', ...target }), 'book.accepted'),
      true
    )

    await send(alice, target, 'one')
    await send(alice, target, 'two')
    assert.strictEqual(pick(await bob.call({ req: 'getBookInfo', ...target }), 'book.nbNotRead'), 2)
    await systemMessages.clearNotRead(asBob, target)
    assert.strictEqual(pick(await bob.call({ req: 'getBookInfo', ...target }), 'book.nbNotRead'), 0)

    await systemMessages.logOpenBook(asBob, target)
    const member = await db.from('book_members').where('user_id', bob.user.id).first()
    assert.isAbove(Number(member.last_open_at), 0)
    await rejects(assert, systemMessages.logOpenBook(asBob, {}), 'MISSING_PARAMETER')
  })

  test('updateBookParam: own prefs, favorite, owner prefs for administrators', async ({
    assert,
  }) => {
    const {
      owner: alice,
      members: [bob],
      target,
    } = await sharedBook(2)
    const asBob = await actorOf(bob)
    await systemMessages.updateBookParam(asBob, { ...target, param: 'maxMsgsOffline', value: '40' })
    await systemMessages.updateBookParam(asBob, { ...target, param: 'favorite', value: 'true' })
    const forBob = pick(await bob.call({ req: 'getBookInfo', ...target }), 'book')
    assert.strictEqual(forBob.userPrefs.maxMsgsOffline, 40)
    assert.strictEqual(forBob.favorite, true)
    await rejects(
      assert,
      systemMessages.updateBookParam(asBob, { ...target, param: 'title', value: 'x' }),
      'FORBIDDEN'
    )
    await systemMessages.updateBookParam(await actorOf(alice), {
      ...target,
      param: 'title',
      value: 'By socket',
    })
    assert.strictEqual(
      pick(await bob.call({ req: 'getBookInfo', ...target }), 'book.ownerPrefs.title'),
      'By socket'
    )
    await rejects(
      assert,
      systemMessages.updateBookParam(asBob, { ...target, param: 'nope', value: 'x' }),
      'INVALID_PARAMETER'
    )
  })

  test('updateUserInfo changes userPrefs and names, and bumps the user stamp', async ({
    assert,
  }) => {
    const who = await client()
    const actor = await actorOf(who)
    const stampOf = async () => {
      const row = await db.from('users').where('id', who.user.id).select('sstamp').first()
      return Number(row.sstamp)
    }
    const before = await stampOf()
    await systemMessages.updateUserInfo(actor, { param: 'city', value: 'Lyon' })
    await systemMessages.updateUserInfo(actor, { param: 'fname', value: 'Renamed' })
    await systemMessages.updateUserInfo(actor, { param: 'syncWithHubic', value: '1' })
    const row = await db.from('users').where('id', who.user.id).first()
    assert.strictEqual(row.first_name, 'Renamed')
    assert.include(row.prefs, '"city":"Lyon"')
    assert.include(row.prefs, '"syncWithStorage":true')
    assert.isAbove(await stampOf(), before)
    await rejects(
      assert,
      systemMessages.updateUserInfo(actor, { param: 'mail1', value: 'x@y.z' }),
      'INVALID_PARAMETER'
    )
    await rejects(
      assert,
      systemMessages.updateUserInfo(actor, { param: 'nbCol', value: 'many' }),
      'INVALID_PARAMETER'
    )
  })
})

test.group('counters under concurrency', () => {
  test('concurrent senders, deleters and refreshes keep nbMsgs and nbNotRead exact', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const carol = await client()
    const target = await book(alice)
    await share(alice, target, bob, 3)
    await share(alice, target, carol, 2)
    const ref = (await bookAccess.resolve(target.b_o, target.b_c))!
    const writers = [alice, bob, carol]
    const perWriter = onMysql() ? 25 : 12
    let refreshing = true
    const refresher = (async () => {
      while (refreshing) {
        await counters.refresh(ref.id)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    const sent = await Promise.all(
      writers.map(async (writer) => {
        const ids: number[] = []
        for (let index = 0; index < perWriter; index++)
          ids.push(pick(await send(writer, target, `${writer.code} ${index}`), 'createMessageId'))
        // Each deletes a third of their own messages while others keep sending.
        for (const smid of ids.filter((_, index) => index % 3 === 0)) {
          await writer.call({ req: 'deleteMsg', ...target, msg_id: smid })
        }
        return ids
      })
    )
    refreshing = false
    await refresher

    const live = await db
      .from('book_messages')
      .where('book_id', ref.id)
      .where('del', false)
      .select('smid', 'creator_id')
    const expectUnread = (userId: number, lastRead: number) =>
      live.filter((row) => Number(row.creator_id) !== userId && Number(row.smid) > lastRead).length
    const verify = async () => {
      for (const who of writers) {
        const view = pick(await who.call({ req: 'getBookInfo', ...target }), 'book')
        assert.strictEqual(view.nbMsgs, live.length, `nbMsgs for ${who.code}`)
        assert.strictEqual(
          view.nbNotRead,
          expectUnread(who.user.id, view.lastMsgRead),
          `nbNotRead for ${who.code}`
        )
      }
    }
    assert.strictEqual(live.length, sent.flat().length - writers.length * Math.ceil(perWriter / 3))
    await verify()
    await counters.refresh(ref.id)
    await verify()
  })
})

test.group('demo data', () => {
  test('two users share a book with messages and an event', async ({ assert }) => {
    const admin = await makeUser({ isAdmin: true })
    await seedBooksDemo({ adminId: admin.id })
    const session = await login(admin)
    const asAdmin = clientFor(admin, session)
    const all = pick(await asAdmin.call({ req: 'getAllBooks' }), 'allBooks')
    const welcome = all.books.find((entry: any) => entry.b_c === 'welcome')
    assert.strictEqual(welcome.nbMembers, 2)
    assert.sameMembers(
      welcome.members.map((member: any) => member.u_c),
      [admin.code, 'camille']
    )
    assert.isAtLeast(welcome.nbMsgs, 3)
    const events = pick(
      await asAdmin.call({ req: 'getBookEvents', b_o: admin.code, b_c: 'welcome' }),
      'bookEvents'
    )
    assert.lengthOf(events, 1)
    assert.deepEqual(
      all.contacts.map((contact: any) => [contact.u_c, contact.isConfirmed]),
      [['camille', true]]
    )
  })
})
