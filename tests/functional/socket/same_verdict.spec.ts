import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { rpc, type Form } from '#tests/helpers/rpc'
import { attached, ensureSocketEndpoint, type TestSocket } from './socket_client.js'
import { member, sharedBook, type Member } from './fixtures.js'

/**
 * api.php and the socket read wire values with the same rules
 * ('#core/rpc/wire'): the same value, sent to the operation and to the socket
 * message that do the same thing, gets the same verdict (ok, or nok with the
 * same errorCode). Booleans, ids and objects, each in the forms clients send.
 */

interface Verdict {
  status: 'ok' | 'nok'
  errorCode?: string
}

type Book = { b_o: string; b_c: string }

const TWO_POW_63_DIGITS = '9223372036854775808'
const TWO_POW_63 = 2 ** 63

const verdictOf = (answer: Record<string, any>): Verdict =>
  answer.status === 'ok' ? { status: 'ok' } : { status: 'nok', errorCode: answer.errorCode }

/** An api.php call as `who`, in the given form (JSON bodies carry JSON numbers, booleans, objects). */
async function api(who: Member, params: Record<string, unknown>, form: Form = 'urlencoded') {
  const { session } = who
  const credentials = { o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey }
  const answer = await rpc({ ...credentials, ...params }, form)
  return answer.body
}

/**
 * Update table value (type 13) answers nothing on success and an error frame
 * on failure: a ping sent after it is answered once it has been handled
 * (frames of a connection are handled in order), so any error frame has
 * arrived by then.
 */
async function socketCell(socket: TestSocket, fields: Record<string, unknown>): Promise<Verdict> {
  socket.send({ type: 13, ...fields })
  socket.send({ type: 9 })
  const pong = await socket.ofType(10)
  if (pong.status !== 'ok') throw new Error(`ping refused: ${JSON.stringify(pong)}`)
  const error = socket.frames.find((frame) => frame.type === 0 && frame.reqType === 13)
  if (!error) return { status: 'ok' }
  socket.frames.splice(socket.frames.indexOf(error), 1)
  return { status: 'nok', errorCode: error.errorCode }
}

/** Send message (type 1): its ack (type 2). */
async function socketSend(socket: TestSocket, fields: Record<string, unknown>) {
  socket.send({ type: 1, ...fields })
  return socket.ofType(2)
}

async function tableOf(owner: Member, book: Book) {
  const table = await owner.call({ req: 'createTable', ...book, name: 'Verdicts' })
  if (table.status !== 'ok') throw new Error(`createTable: ${JSON.stringify(table)}`)
  const field = await owner.call({
    req: 'createField',
    b_o: book.b_o,
    catId: table.catId,
    name: 'Name',
    type: 'shorttext',
  })
  if (field.status !== 'ok') throw new Error(`createField: ${JSON.stringify(field)}`)
  return { fieldId: field.fieldId as number }
}

async function messageOf(owner: Member, book: Book) {
  const sent = await owner.call({ req: 'sendMsg', ...book, msg: 'to be edited' })
  if (sent.status !== 'ok') throw new Error(`sendMsg: ${JSON.stringify(sent)}`)
  return sent.createMessageId as number
}

const OK = 'ok'
const INVALID = 'INVALID_PARAMETER'
const MISSING = 'MISSING_PARAMETER'
const NOT_FOUND = 'NOT_FOUND'

const expectedOf = (verdict: string): Verdict =>
  verdict === OK ? { status: 'ok' } : { status: 'nok', errorCode: verdict }

let numbers = 0
/** A number no other test sends (a message uuid is used once per book). */
const uniqueNumber = () => Date.now() * 1000 + ++numbers

let rows = 0
const tmpRow = () => `tmp-verdict-${++rows}`

test.group('same verdict on api.php and the socket', (group) => {
  let alice: Member
  let book: Book
  let fieldId: number
  let socket: TestSocket

  group.setup(async () => {
    await ensureSocketEndpoint()
    alice = await member()
    book = await sharedBook(alice)
    const table = await tableOf(alice, book)
    fieldId = table.fieldId
    socket = await attached(alice.session)
    return async () => {
      await socket.close()
    }
  })

  group.each.setup(() => {
    socket.frames.length = 0
  })

  // ---- booleans ---------------------------------------------------------------------

  test('bypassUrlTrigger={label}: updateTableValue and type 13 agree')
    .with([
      { label: 'yes', value: 'yes', expected: { status: 'ok' } },
      { label: 'no', value: 'no', expected: { status: 'ok' } },
      { label: 'TRUE', value: 'TRUE', expected: { status: 'ok' } },
      { label: 'off', value: 'off', expected: { status: 'ok' } },
      { label: '1', value: '1', expected: { status: 'ok' } },
      { label: 'empty (not given)', value: '', expected: { status: 'ok' } },
      {
        label: 'maybe',
        value: 'maybe',
        expected: { status: 'nok', errorCode: 'INVALID_PARAMETER' },
      },
      { label: '2', value: '2', expected: { status: 'nok', errorCode: 'INVALID_PARAMETER' } },
    ])
    .run(async ({ assert }, { value, expected }) => {
      const onApi = verdictOf(
        await api(alice, {
          req: 'updateTableValue',
          b_o: book.b_o,
          rowId: tmpRow(),
          fieldId,
          value: 'x',
          bypassUrlTrigger: value,
        })
      )
      const onSocket = await socketCell(socket, {
        ...book,
        rowId: tmpRow(),
        fieldId,
        value: 'x',
        bypassUrlTrigger: value,
      })
      assert.deepEqual(onApi, expected)
      assert.deepEqual(onSocket, onApi)
    })

  test('bypassUrlTrigger as a JSON {label}: a JSON body and a frame agree')
    .with([
      { label: 'true', value: true },
      { label: 'false', value: false },
      { label: 'number 1', value: 1 },
    ])
    .run(async ({ assert }, { value }) => {
      const params = { b_o: book.b_o, fieldId, value: 'x', bypassUrlTrigger: value }
      const onApi = verdictOf(
        await api(alice, { req: 'updateTableValue', rowId: tmpRow(), ...params }, 'json')
      )
      const onSocket = await socketCell(socket, { ...params, b_c: book.b_c, rowId: tmpRow() })
      assert.deepEqual(onApi, { status: 'ok' })
      assert.deepEqual(onSocket, onApi)
    })

  test('del={label} on type 1 follows the boolean rule api.php applies')
    .with([
      { label: 'yes', value: 'yes', deleted: true },
      { label: 'no', value: 'no', deleted: false },
      { label: 'On', value: 'On', deleted: true },
      { label: '0', value: '0', deleted: false },
      { label: 'JSON true', value: true, deleted: true },
      { label: 'maybe', value: 'maybe', deleted: null },
      { label: '2', value: '2', deleted: null },
    ])
    .run(async ({ assert }, { value, deleted }) => {
      // The same value as api.php's boolean parameter of a write (updateTableValue's).
      const onApi = verdictOf(
        await api(alice, {
          req: 'updateTableValue',
          b_o: book.b_o,
          rowId: tmpRow(),
          fieldId,
          value: 'x',
          bypassUrlTrigger: value,
        })
      )
      const smid = await messageOf(alice, book)
      const ack = await socketSend(socket, { ...book, smid, msg: 'edited', del: value })
      assert.deepEqual(verdictOf(ack), onApi)
      if (deleted === null) {
        assert.deepEqual(onApi, { status: 'nok', errorCode: 'INVALID_PARAMETER' })
      } else {
        assert.equal(ack.status, 'ok', JSON.stringify(ack))
        assert.equal(ack.del, deleted)
      }
    })

  // ---- ids --------------------------------------------------------------------------

  test('fieldId as {label}: updateTableValue and type 13 agree')
    .with([
      { label: 'digits', value: (id: number) => String(id), json: false, ok: true },
      { label: 'a JSON number', value: (id: number) => id, json: true, ok: true },
      { label: 'a negative number', value: () => '-1', json: false, ok: false },
      { label: 'letters', value: () => 'abc', json: false, ok: false },
      { label: '2^63 in digits', value: () => TWO_POW_63_DIGITS, json: false, ok: false },
      { label: '2^63 as a JSON number', value: () => TWO_POW_63, json: true, ok: false },
      { label: 'a fraction', value: () => 1.5, json: true, ok: false },
    ])
    .run(async ({ assert }, { value, json, ok }) => {
      const sent = value(fieldId)
      const params = { b_o: book.b_o, fieldId: sent, value: 'x' }
      const onApi = verdictOf(
        await api(
          alice,
          { req: 'updateTableValue', rowId: tmpRow(), ...params },
          json ? 'json' : 'urlencoded'
        )
      )
      const onSocket = await socketCell(socket, { ...params, b_c: book.b_c, rowId: tmpRow() })
      assert.deepEqual(
        onApi,
        ok ? { status: 'ok' } : { status: 'nok', errorCode: 'INVALID_PARAMETER' }
      )
      assert.deepEqual(onSocket, onApi)
    })

  test('a missing fieldId or rowId is MISSING_PARAMETER on both', async ({ assert }) => {
    for (const fields of [
      { rowId: tmpRow(), fieldId: '' },
      { rowId: '', fieldId },
      { rowId: '   ', fieldId },
    ]) {
      const onApi = verdictOf(
        await api(alice, { req: 'updateTableValue', b_o: book.b_o, value: 'x', ...fields })
      )
      const onSocket = await socketCell(socket, { ...book, value: 'x', ...fields })
      assert.deepEqual(onApi, { status: 'nok', errorCode: 'MISSING_PARAMETER' })
      assert.deepEqual(onSocket, onApi, JSON.stringify(fields))
    }
  })

  test('rowId as {label}: updateTableValue and type 13 agree')
    .with([
      { label: 'digits', value: (id: number) => String(id), json: false },
      { label: 'a JSON number', value: (id: number) => id, json: true },
      { label: 'a negative number', value: () => '-1', json: false },
      { label: 'letters', value: () => 'abc', json: false },
      { label: '2^63 in digits', value: () => TWO_POW_63_DIGITS, json: false },
      { label: 'an object', value: () => ({ id: 1 }), json: true },
    ])
    .run(async ({ assert }, { label, value, json }) => {
      const created = await api(alice, {
        req: 'updateTableValue',
        b_o: book.b_o,
        rowId: tmpRow(),
        fieldId,
        value: 'first',
      })
      assert.equal(created.status, 'ok', JSON.stringify(created))
      const rowId = value(created.newRows[0].id)
      const params = { b_o: book.b_o, rowId, fieldId, value: 'again' }
      const onApi = verdictOf(
        await api(alice, { req: 'updateTableValue', ...params }, json ? 'json' : 'urlencoded')
      )
      const onSocket = await socketCell(socket, { ...params, b_c: book.b_c })
      if (label === 'digits' || label === 'a JSON number') assert.deepEqual(onApi, { status: 'ok' })
      else assert.equal(onApi.status, 'nok')
      assert.deepEqual(onSocket, onApi)
    })

  test('smid as {label}: sendMsg msg_id and type 1 smid agree')
    .with([
      { label: 'digits', value: (smid: number) => String(smid), json: false, ok: true },
      { label: 'a JSON number', value: (smid: number) => smid, json: true, ok: true },
      { label: 'a negative number', value: () => '-1', json: false, ok: false },
      { label: 'letters', value: () => 'abc', json: false, ok: false },
      { label: '2^63 in digits', value: () => TWO_POW_63_DIGITS, json: false, ok: false },
      { label: '2^63 as a JSON number', value: () => TWO_POW_63, json: true, ok: false },
      { label: 'an array', value: (smid: number) => [smid], json: true, ok: false },
    ])
    .run(async ({ assert }, { value, json, ok }) => {
      const smid = await messageOf(alice, book)
      const onApi = verdictOf(
        await api(
          alice,
          { req: 'sendMsg', ...book, msg: 'edited on api.php', msg_id: value(smid) },
          json ? 'json' : 'urlencoded'
        )
      )
      const ack = await socketSend(socket, {
        ...book,
        smid: value(smid),
        msg: 'edited on the socket',
      })
      assert.deepEqual(
        onApi,
        ok ? { status: 'ok' } : { status: 'nok', errorCode: 'INVALID_PARAMETER' }
      )
      assert.deepEqual(verdictOf(ack), onApi)
      if (ok) assert.equal(ack.smid, smid)
    })

  // ---- objects ----------------------------------------------------------------------

  test('event as {label}: sendMsg and type 1 agree')
    .with([
      {
        label: 'a JSON object text',
        api: { event: '{"eventStart":1893456000,"eventEnd":1893459600}' },
        frame: { event: '{"eventStart":1893456000,"eventEnd":1893459600}' },
        form: 'urlencoded' as Form,
        ok: true,
      },
      {
        label: 'a JSON object',
        api: { event: { eventStart: 1893456000, eventEnd: 1893459600 } },
        frame: { event: { eventStart: 1893456000, eventEnd: 1893459600 } },
        form: 'json' as Form,
        ok: true,
      },
      {
        // event[eventStart]=...&event[eventEnd]=... on api.php; on the socket, the object it decodes to.
        label: 'bracket form',
        api: { event: { eventStart: '1893456000', eventEnd: '1893459600' } },
        frame: { event: { eventStart: '1893456000', eventEnd: '1893459600' } },
        form: 'urlencoded' as Form,
        ok: true,
      },
      {
        label: 'garbage text',
        api: { event: 'garbage' },
        frame: { event: 'garbage' },
        form: 'urlencoded' as Form,
        ok: false,
      },
      {
        label: 'a JSON list',
        api: { event: '[1,2]' },
        frame: { event: [1, 2] },
        form: 'urlencoded' as Form,
        ok: false,
      },
      {
        label: 'a number',
        api: { event: 5 },
        frame: { event: 5 },
        form: 'json' as Form,
        ok: false,
      },
      {
        label: 'an object that is no event (end before start)',
        api: { event: { eventStart: 1893459600, eventEnd: 1893456000 } },
        frame: { event: { eventStart: 1893459600, eventEnd: 1893456000 } },
        form: 'json' as Form,
        ok: false,
      },
    ])
    .run(async ({ assert }, row) => {
      const onApi = verdictOf(
        await api(alice, { req: 'sendMsg', ...book, msg: 'with an event', ...row.api }, row.form)
      )
      const ack = await socketSend(socket, {
        ...book,
        uuid: randomUUID(),
        smid: 0,
        msg: 'with an event',
        ...row.frame,
      })
      assert.deepEqual(
        onApi,
        row.ok ? { status: 'ok' } : { status: 'nok', errorCode: 'INVALID_PARAMETER' }
      )
      assert.deepEqual(verdictOf(ack), onApi)
    })
  // ---- text ---------------------------------------------------------------------------
  // Text fields follow the kernel's text rules on both entry points: a JSON number or boolean is
  // read as its text (JSON bodies and frames carry JSON values), a list or an object is refused,
  // a blank code is "not given"; lengths are the service's, for both.

  test('sendMsg and type 1 read {label} the same')
    .with([
      { label: 'msg as a JSON number', fields: { msg: 42 }, verdict: OK },
      { label: 'msg as a JSON boolean', fields: { msg: true }, verdict: OK },
      { label: 'msg as an object', fields: { msg: { text: 'hi' } }, verdict: INVALID },
      { label: 'msg as a list', fields: { msg: ['hi'] }, verdict: INVALID },
      { label: 'msg empty', fields: { msg: '' }, verdict: MISSING },
      { label: 'msg over-long', fields: { msg: 'x'.repeat(65_536) }, verdict: INVALID },
      { label: 'body as a JSON number', fields: { body: 7 }, verdict: OK },
      { label: 'body as an object', fields: { body: { html: 1 } }, verdict: INVALID },
      { label: 'msgBody as a list', fields: { msgBody: ['x'] }, verdict: INVALID },
      { label: 'bodyHtml as a list', fields: { bodyHtml: ['<p>'] }, verdict: INVALID },
      { label: 'b_o as a JSON number', fields: { b_o: 123 }, verdict: NOT_FOUND },
      { label: 'b_o as an object', fields: { b_o: { code: 1 } }, verdict: INVALID },
      { label: 'b_o as a list', fields: { b_o: ['a'] }, verdict: INVALID },
      { label: 'b_o empty (the sender)', fields: { b_o: '' }, verdict: OK },
      { label: 'b_o over-long', fields: { b_o: 'o'.repeat(300) }, verdict: NOT_FOUND },
      { label: 'b_c as a JSON number', fields: { b_c: 123 }, verdict: NOT_FOUND },
      { label: 'b_c as an object', fields: { b_c: { code: 1 } }, verdict: INVALID },
      { label: 'b_c as a list', fields: { b_c: [] }, verdict: INVALID },
      { label: 'b_c over-long', fields: { b_c: 'c'.repeat(300) }, verdict: NOT_FOUND },
      { label: 'uuid as a JSON number', fields: { uuid: 'number' }, verdict: OK },
      { label: 'uuid as an object', fields: { uuid: { v: 4 } }, verdict: INVALID },
      { label: 'uuid as a list', fields: { uuid: ['a'] }, verdict: INVALID },
      { label: 'uuid over-long', fields: { uuid: 'u'.repeat(65) }, verdict: INVALID },
      { label: 'msgColor as a JSON number', fields: { msgColor: 5 }, verdict: OK },
      { label: 'msgColor as an object', fields: { msgColor: { c: 1 } }, verdict: INVALID },
      { label: 'msgColor over-long', fields: { msgColor: 'c'.repeat(33) }, verdict: INVALID },
      // Trimmed on both before its length is checked.
      { label: 'msgColor padded', fields: { msgColor: ` ${'c'.repeat(32)} ` }, verdict: OK },
    ])
    .run(async ({ assert }, { fields, verdict }) => {
      // A uuid is used once per book: each entry point gets its own (a number for that case).
      const uuids =
        fields.uuid === 'number' ? [uniqueNumber(), uniqueNumber()] : [randomUUID(), randomUUID()]
      const sent = (uuid: unknown) => ({
        ...book,
        msg: 'hello',
        uuid,
        ...fields,
        ...(fields.uuid === 'number' ? { uuid } : {}),
      })
      const onApi = verdictOf(await api(alice, { req: 'sendMsg', ...sent(uuids[0]) }, 'json'))
      const ack = await socketSend(socket, { smid: 0, ...sent(uuids[1]) })
      assert.deepEqual(onApi, expectedOf(verdict))
      assert.deepEqual(verdictOf(ack), onApi)
    })

  test('a text field in form encoding reads as in a frame: {label}')
    .with([
      { label: 'msg of digits', fields: { msg: '42' }, verdict: OK },
      { label: 'msg in bracket form (an object)', fields: { msg: { a: '1' } }, verdict: INVALID },
      { label: 'b_c in bracket form (a list)', fields: { b_c: ['a', 'b'] }, verdict: INVALID },
      { label: 'b_c blank (the first word of msg)', fields: { b_c: '   ' }, verdict: NOT_FOUND },
    ])
    .run(async ({ assert }, { fields, verdict }) => {
      const sent = { ...book, msg: 'hello', ...fields }
      const onApi = verdictOf(await api(alice, { req: 'sendMsg', uuid: randomUUID(), ...sent }))
      const ack = await socketSend(socket, { smid: 0, uuid: randomUUID(), ...sent })
      assert.deepEqual(onApi, expectedOf(verdict))
      assert.deepEqual(verdictOf(ack), onApi)
    })

  test('updateTableValue and type 13 read {label} the same')
    .with([
      { label: 'b_o as a JSON number', fields: { b_o: 123 }, verdict: NOT_FOUND },
      { label: 'b_o as an object', fields: { b_o: { code: 1 } }, verdict: INVALID },
      { label: 'b_o as a list', fields: { b_o: ['a'] }, verdict: INVALID },
      { label: 'b_o empty (not given)', fields: { b_o: '' }, verdict: OK },
      { label: 'b_o padded', fields: { b_o: 'padded' }, verdict: OK },
      { label: 'b_o over-long', fields: { b_o: 'o'.repeat(300) }, verdict: NOT_FOUND },
      { label: 'rowId as a list', fields: { rowId: ['tmp-1'] }, verdict: INVALID },
      { label: 'rowId as a JSON boolean', fields: { rowId: true }, verdict: INVALID },
      { label: 'value as a JSON number', fields: { value: 42 }, verdict: OK },
      { label: 'value as a JSON boolean', fields: { value: false }, verdict: OK },
      // The spec's value is "string or JSON": a text cell keeps an object or a list as JSON text.
      { label: 'value as an object', fields: { value: { a: 1 } }, verdict: OK },
      { label: 'value as a list', fields: { value: ['a', 'b'] }, verdict: OK },
      { label: 'value empty', fields: { value: '' }, verdict: OK },
      {
        label: 'value over-long (shorttext)',
        fields: { value: 'v'.repeat(256) },
        verdict: INVALID,
      },
    ])
    .run(async ({ assert }, { fields, verdict }) => {
      const sent = () => ({
        b_o: book.b_o,
        rowId: tmpRow(),
        fieldId,
        value: 'x',
        ...fields,
        ...(fields.b_o === 'padded' ? { b_o: `  ${book.b_o} ` } : {}),
      })
      const onApi = verdictOf(await api(alice, { req: 'updateTableValue', ...sent() }, 'json'))
      const onSocket = await socketCell(socket, { b_c: book.b_c, ...sent() })
      assert.deepEqual(onApi, expectedOf(verdict))
      assert.deepEqual(onSocket, onApi)
    })
})

test.group(
  'same verdict: the members of a book see the events both entry points wrote',
  (group) => {
    group.setup(async () => {
      await ensureSocketEndpoint()
    })

    test('an event sent in bracket form on api.php and as an object on the socket reads the same', async ({
      assert,
    }) => {
      const alice = await member()
      const book = await sharedBook(alice)
      const socket = await attached(alice.session)
      const event = { eventStart: '1893456000', eventEnd: '1893459600' }
      const sent = await api(alice, { req: 'sendMsg', ...book, msg: 'api', event })
      assert.equal(sent.status, 'ok', JSON.stringify(sent))
      const ack = await socketSend(socket, {
        ...book,
        uuid: randomUUID(),
        smid: 0,
        msg: 'socket',
        event,
      })
      assert.equal(ack.status, 'ok', JSON.stringify(ack))
      const listed = await alice.call({ req: 'getBookMessages', ...book })
      const byMsg = new Map<string, any>(
        (listed.bookMessages as any[]).map((message) => [message.msg, message])
      )
      assert.deepEqual(byMsg.get('socket').event, byMsg.get('api').event)
      assert.isNotNull(byMsg.get('api').event ?? null)
      await socket.close()
    })
  }
)
