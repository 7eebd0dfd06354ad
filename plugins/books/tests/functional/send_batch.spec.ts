import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import { MessageService } from '#plugins/books/services/message_service'
import { StampService } from '#core/services/stamp_service'
import { actorOf, book, client, sessionOf, sharedBook } from '../helpers/books.js'

const [bookAccess, messages, stamps] = await Promise.all([
  app.container.make(BookAccessService),
  app.container.make(MessageService),
  app.container.make(StampService),
])

/** What a call answered: its value, or its error's code and message. */
const outcomeOf = async (work: () => Promise<unknown>) => {
  try {
    return { value: await work() }
  } catch (error: any) {
    return { code: error.code, message: error.message }
  }
}

/**
 * Alice's book shared with Bob (right 2) and a reader (right 1), another book of Bob's, and Carol, who
 * belongs to neither.
 */
async function cast() {
  const {
    owner: alice,
    members: [bob, reader],
    target,
  } = await sharedBook(2, 1)
  return { alice, bob, reader, target, other: await book(bob), carol: await client() }
}

test.group('sends whose book is checked with their batch', () => {
  test('resolveManyFor answers each request as resolveFor does', async ({ assert }) => {
    const { alice, bob, reader, target, other, carol } = await cast()
    const requests = [
      { who: await actorOf(alice), ...target },
      { who: await actorOf(bob), ...target },
      { who: await actorOf(reader), ...target },
      { who: await actorOf(carol), ...target },
      { who: await actorOf(bob), ...other },
      { who: await actorOf(alice), ...other },
      { who: await actorOf(alice), b_o: target.b_o, b_c: 'missing' },
      { who: await actorOf(await sessionOf(bob, JSON.stringify({ carnet_code: 'x' }))), ...target },
      {
        who: await actorOf(await sessionOf(bob, JSON.stringify({ carnet_code: 'x' }))),
        b_o: target.b_o,
        b_c: 'missing',
      },
      { who: await actorOf(await sessionOf(bob, JSON.stringify({ readonly: true }))), ...target },
      { who: await actorOf(bob), ...target },
      { who: await actorOf(bob), b_o: '', b_c: target.b_c },
    ]
    // Every mix: all of them in one statement, each alone (resolveFor's very statement), pairs.
    const groups = [requests, ...requests.map((request) => [request]), requests.slice(3, 6)]
    for (const group of groups) {
      const many = await bookAccess.resolveManyFor(
        group.map(({ who, b_o, b_c }) => ({ actor: who, b_o, b_c, need: 'write' as const }))
      )
      assert.lengthOf(many, group.length)
      for (const [index, request] of group.entries()) {
        const expected = await outcomeOf(() =>
          bookAccess.resolveFor(request.who, request.b_o, request.b_c, 'write')
        )
        const got = many[index]
        const actual =
          got instanceof Error ? { code: (got as any).code, message: got.message } : { value: got }
        assert.deepEqual(actual, expected, `request ${requests.indexOf(group[index])}`)
      }
    }
    // The expectations themselves: a writer, a reader, a stranger, a restricted session.
    const all = await bookAccess.resolveManyFor(
      requests.map(({ who, b_o, b_c }) => ({ actor: who, b_o, b_c, need: 'write' as const }))
    )
    assert.deepEqual(
      all.map((outcome) => (outcome instanceof Error ? (outcome as any).code : outcome.b_c)),
      [
        target.b_c,
        target.b_c,
        'FORBIDDEN',
        'NOT_FOUND',
        other.b_c,
        'NOT_FOUND',
        'NOT_FOUND',
        'RESTRICTED_SESSION',
        'RESTRICTED_SESSION',
        'READONLY_SESSION',
        target.b_c,
        'NOT_FOUND',
      ]
    )
  })

  test('sends of several senders and books submitted together: each stored in its own book or refused alone; a member who left is refused at once', async ({
    assert,
  }) => {
    const { alice, bob, reader, target, other, carol } = await cast()
    const bookRows = await db
      .from('books')
      .whereIn('code', [target.b_c, other.b_c])
      .select('id', 'code')
    const ids = new Map(bookRows.map((row) => [row.code, Number(row.id)]))
    const senders = [
      { who: await actorOf(alice), into: target, expect: 'ok' },
      { who: await actorOf(bob), into: target, expect: 'ok' },
      { who: await actorOf(bob), into: other, expect: 'ok' },
      { who: await actorOf(reader), into: target, expect: 'FORBIDDEN' },
      { who: await actorOf(carol), into: target, expect: 'NOT_FOUND' },
      { who: await actorOf(alice), into: other, expect: 'NOT_FOUND' },
    ]
    const tag = `batch-${Date.now().toString(36)}`
    const sends = Array.from({ length: 36 }, (_, index) => ({
      sender: senders[index % senders.length],
      msg: `${tag} ${index}`,
    }))
    const outcomes = await Promise.all(
      sends.map(({ sender, msg }) =>
        outcomeOf(() => messages.send(sender.who, { ...sender.into, msg }))
      )
    )
    const stored = await db
      .from('book_messages')
      .where('msg', 'like', `${tag} %`)
      .select('smid', 'book_id', 'creator_id', 'msg')
    const bySmid = new Map(stored.map((row) => [Number(row.smid), row]))
    for (const [index, outcome] of outcomes.entries()) {
      const { sender, msg } = sends[index]
      if (sender.expect !== 'ok') {
        assert.equal((outcome as any).code, sender.expect, `send ${index}`)
        continue
      }
      const result = (outcome as any).value
      assert.exists(result, `send ${index}: ${JSON.stringify(outcome)}`)
      assert.deepEqual(result.book, await bookAccess.resolve(sender.into.b_o, sender.into.b_c))
      const row = bySmid.get(result.smid)
      assert.exists(row, `send ${index}`)
      assert.equal(Number(row.book_id), ids.get(sender.into.b_c))
      assert.equal(Number(row.creator_id), sender.who.user.id)
      assert.equal(row.msg, msg)
      assert.equal(result.message.msg, msg)
      assert.isTrue(result.isNew)
    }
    assert.lengthOf(stored, sends.filter(({ sender }) => sender.expect === 'ok').length)

    // Bob leaves: his very next send is refused, alone or among others'.
    const asBob = await actorOf(bob)
    const left = await bob.call({ req: 'leaveBook', ...target })
    assert.equal(left.status, 'ok')
    const after = await Promise.all([
      outcomeOf(() => messages.send(asBob, { ...target, msg: `${tag} after` })),
      outcomeOf(() => messages.send(senders[0].who, { ...target, msg: `${tag} after alice` })),
    ])
    assert.equal((after[0] as any).code, 'NOT_FOUND')
    assert.isTrue((after[1] as any).value.isNew)
  })

  test('batches that follow one another: each send answered a watermark covering its message; no stamp left in flight', async ({
    assert,
  }) => {
    const { alice, target } = await cast()
    const asAlice = await actorOf(alice)
    const tag = `follow-${Date.now().toString(36)}`
    // One send starts a batch at once; the others queue behind it and go in the batches after
    // (with Redis, each of those batches' stamps is acquired with the previous one's watermark).
    const first = messages.send(asAlice, { ...target, msg: `${tag} 0` })
    const rest = Array.from({ length: 30 }, (_, index) =>
      messages.send(asAlice, { ...target, msg: `${tag} ${index + 1}` })
    )
    const results = await Promise.all([first, ...rest])
    const rows = await db
      .from('book_messages')
      .where('msg', 'like', `${tag} %`)
      .orderBy('smid')
      .select('smid', 'cstamp', 'msg')
    assert.lengthOf(rows, 31)
    const cstampOf = new Map(rows.map((row) => [Number(row.smid), Number(row.cstamp)]))
    for (const result of results) assert.isAtLeast(result.sstamp, cstampOf.get(result.smid)!)
    // Batches in order: stamps never go back along the smids; more than one batch.
    const cstamps = rows.map((row) => Number(row.cstamp))
    for (let index = 1; index < cstamps.length; index++)
      assert.isAtLeast(cstamps[index], cstamps[index - 1])
    assert.isAbove(new Set(cstamps).size, 1)
    // A stamp acquired for a batch and never released would hold the watermark below later writes.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const later = await stamps.write(async ({ stamp }) => stamp)
    assert.isAtLeast(await stamps.watermark(), later)
  })
})
