import app from '@adonisjs/core/services/app'
import { test } from '@japa/runner'
import emitter from '@adonisjs/core/services/emitter'
import { UserService } from '#core/services/user_service'
import type { RowsChanged } from '#plugins/tables/events'
import { attached, ensureSocketEndpoint } from './socket_client.js'
import { member, sharedBook, type Member } from './fixtures.js'

const users = await app.container.make(UserService)

async function tableOf(owner: Member, book: { b_o: string; b_c: string }) {
  const table = await owner.call({ req: 'createTable', ...book, name: 'Socket table' })
  if (table.status !== 'ok') throw new Error(`createTable: ${JSON.stringify(table)}`)
  const field = await owner.call({
    req: 'createField',
    b_o: book.b_o,
    catId: table.catId,
    name: 'Name',
    type: 'shorttext',
  })
  if (field.status !== 'ok') throw new Error(`createField: ${JSON.stringify(field)}`)
  return { catId: table.catId as number, fieldId: field.fieldId as number }
}

async function cells(viewer: Member, b_o: string, catId: number) {
  const answer = await viewer.call({ req: 'getTableValues', b_o, catId, format: 'rows' })
  if (answer.status !== 'ok') throw new Error(`getTableValues: ${JSON.stringify(answer)}`)
  return answer.tableValues.rows as { id: number; fields: Record<string, { value: unknown }> }[]
}

/** The next tables:rows_changed event (emitted after commit). */
function nextRowsChange() {
  return new Promise<RowsChanged>((resolve) => {
    const listener = (event: RowsChanged) => {
      emitter.off('tables:rows_changed', listener)
      resolve(event)
    }
    emitter.on('tables:rows_changed', listener)
  })
}

test.group('socket: update table value (type 13)', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test('writes the cell through the tables plugin; members get book updates ready', async ({
    assert,
  }) => {
    const alice = await member()
    const bob = await member()
    const book = await sharedBook(alice, [bob])
    const { catId, fieldId } = await tableOf(alice, book)
    const [aliceSocket, bobSocket] = await Promise.all([
      attached(alice.session),
      attached(bob.session),
    ])
    bobSocket.frames.length = 0

    const changed = nextRowsChange()
    aliceSocket.send({
      type: 13,
      version: '6.49',
      updatedAt: Date.now(),
      ...book,
      value: 'Ada',
      rowId: 'tmp1',
      fieldId,
      rowUuid: '',
      fieldUuid: '',
    })
    const event = await changed
    assert.equal(event.source, 'socket')
    assert.equal(event.actorId, alice.user.id)
    assert.isNull(event.onBehalfOf)
    assert.lengthOf(event.created, 1)
    const ready = await bobSocket.ofType(8)
    assert.equal(ready.u_c, bob.code)
    const rows = await cells(alice, book.b_o, catId)
    assert.equal(rows[0].fields.Name.value, 'Ada')

    // An existing row by id (as a number, the spec says bigint), no answer on success.
    aliceSocket.send({
      type: 13,
      ...book,
      value: 'Grace',
      rowId: rows[0].id,
      fieldId: String(fieldId),
    })
    await nextRowsChange()
    const again = await cells(alice, book.b_o, catId)
    assert.equal(again[0].fields.Name.value, 'Grace')
    assert.isTrue(await aliceSocket.none((frame) => frame.type === 0, 100))
    await Promise.all([aliceSocket.close(), bobSocket.close()])
  })

  test('obo_u: a delegate writes on behalf of the user; without delegation it is refused', async ({
    assert,
  }) => {
    const alice = await member()
    const bot = await member()
    const book = await sharedBook(alice)
    const { catId, fieldId } = await tableOf(alice, book)
    await users.grantDelegation(alice.user.id, bot.user.id)
    const botSocket = await attached(bot.session)

    const changed = nextRowsChange()
    botSocket.send({
      type: 13,
      ...book,
      obo_u: alice.code,
      value: 'by the bot',
      rowId: 'tmp-bot',
      fieldId,
    })
    const event = await changed
    assert.equal(event.actorId, alice.user.id)
    assert.equal(event.onBehalfOf, bot.user.id)
    const rows = await cells(alice, book.b_o, catId)
    assert.equal(rows[0].fields.Name.value, 'by the bot')

    // The bot for itself is not a member of the book.
    botSocket.send({ type: 13, ...book, value: 'x', rowId: 'tmp-2', fieldId })
    const notMember = await botSocket.ofType(0)
    assert.equal(notMember.errorCode, 'NOT_FOUND')
    assert.equal(notMember.reqType, 13)
    assert.equal(notMember.fieldId, fieldId)

    // Alice never delegated to bob.
    const bob = await member()
    const bobSocket = await attached(bob.session)
    bobSocket.send({ type: 13, ...book, obo_u: alice.code, value: 'x', rowId: 'tmp-3', fieldId })
    const denied = await bobSocket.ofType(0)
    assert.equal(denied.errorCode, 'ON_BEHALF_DENIED')
    assert.lengthOf(await cells(alice, book.b_o, catId), 1)
    await Promise.all([botSocket.close(), bobSocket.close()])
  })

  test('bad cells are refused with an error frame, nothing written', async ({ assert }) => {
    const alice = await member()
    const book = await sharedBook(alice)
    const { catId, fieldId } = await tableOf(alice, book)
    const socket = await attached(alice.session)
    const cases: [Record<string, unknown>, string][] = [
      [{ value: 'x', fieldId }, 'MISSING_PARAMETER'],
      [{ value: 'x', rowId: 'tmp1' }, 'MISSING_PARAMETER'],
      [{ value: 'x', rowId: 'tmp1', fieldId: 'abc' }, 'INVALID_PARAMETER'],
      [{ value: 'x', rowId: 'tmp1', fieldId: 99999999 }, 'NOT_FOUND'],
      [{ value: 'x', rowId: '123456789', fieldId }, 'NOT_FOUND'],
    ]
    for (const [fields, code] of cases) {
      socket.send({ type: 13, ...book, ...fields })
      const error = await socket.ofType(0)
      assert.equal(error.status, 'nok')
      assert.equal(error.errorCode, code, JSON.stringify(error))
    }
    assert.lengthOf(await cells(alice, book.b_o, catId), 0)
    await socket.close()
  })
})
