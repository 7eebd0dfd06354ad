import { test } from '@japa/runner'
import { login } from '#tests/helpers/users'
import {
  addField,
  addRows,
  caller,
  errorCode,
  makeBook,
  ok,
  rowsChangedEvents,
  rowsOf,
} from '../helpers/tables.js'

/** A table of orders with one field of each formatted type and two smart text fields. */
async function fixture() {
  const book = await makeBook([{ right: 1 }])
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const shops = ok(await call('createTable', { ...base, name: 'Shops' })).catId as number
  const shopName = await addField(call, shops, 'Name', 'shorttext')
  const [shop] = await addRows(call, [{ [shopName]: 'Paris & Co' }])
  const catId = ok(await call('createTable', { ...base, name: 'Orders' })).catId as number
  const field = (name: string, type: string, options: Record<string, unknown> = {}) =>
    addField(call, catId, name, type, options, { code: name.toLowerCase() })
  const f = {
    name: await field('Name', 'shorttext'),
    price: await field('Price', 'double', { numformat: '0.00' }),
    day: await field('Day', 'date', { dateFormat: 'd/m/Y' }),
    color: await field('Color', 'enum', { values: ['red', 'blue'] }),
    owner: await field('Owner', 'user'),
    done: await field('Done', 'checkbox'),
    shop: await field('Shop', 'link', { linkCatId: shops }),
  }
  const template = `{Name}: <b>{price}</b> on {Day}, {Color}, {Owner}, {Done}, {f${f.shop}} {Nope}`
  const html = await field('Summary', 'smarttext', { template, templateFormat: 'html' })
  const plain = await field('Plain', 'smarttext', { template: '{Name} costs {Price}' })
  const [rowId] = await addRows(call, [
    {
      [f.name]: 'Tom <script>',
      [f.price]: '3.5',
      [f.day]: '2024-03-09',
      [f.color]: 'red',
      [f.owner]: book.b_o,
      [f.done]: '1',
      [f.shop]: String(shop),
    },
  ])
  return { book, call, catId, f, html, plain, rowId }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

const render = (fx: Fixture, params: Record<string, unknown>, call = fx.call) =>
  call('renderSmartTextField', {
    b_o: fx.book.b_o,
    catId: fx.catId,
    rowId: fx.rowId,
    fieldId: fx.html,
    ...params,
  })

test.group('tables: renderSmartTextField', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('renders placeholders by name, code and id, per type, HTML-escaped, and stores the result', async ({
    assert,
  }) => {
    const owner = `${fx.book.owner.firstName} ${fx.book.owner.lastName}`.trim() || fx.book.b_o
    const expected =
      `Tom &lt;script&gt;: <b>3.50</b> on 09/03/2024, red, ${owner}, yes, ` +
      'Paris &amp; Co {Nope}'
    const answer = ok(await render(fx, {}))
    assert.equal(answer.value, expected)
    const rows = await rowsOf(fx.call, fx.catId)
    assert.equal(rows[String(fx.rowId)][String(fx.html)], expected)
  })

  test('a text template is not escaped', async ({ assert }) => {
    const answer = ok(await render(fx, { fieldId: fx.plain }))
    assert.equal(answer.value, 'Tom <script> costs 3.50')
  })

  test('the write is announced like any cell write, bypassUrlTrigger passed on', async ({
    assert,
  }) => {
    const events = rowsChangedEvents()
    try {
      ok(await render(fx, { fieldId: fx.plain, bypassUrlTrigger: 'false' }))
    } finally {
      events.stop()
    }
    const event = events.events.find((candidate) => candidate.categoryId === fx.catId)!
    assert.deepEqual(event.modified, [fx.rowId])
    assert.deepEqual(event.fieldIds, [fx.plain])
    assert.isFalse(event.bypassUrlTrigger)
  })

  test('bad parameters answer documented codes, and write nothing', async ({ assert }) => {
    ok(await fx.call('updateTableValue', { rowId: fx.rowId, fieldId: fx.plain, value: 'kept' }))
    const code = (params: Record<string, unknown>) =>
      errorCode(render(fx, { fieldId: fx.plain, ...params }))
    assert.equal(await code({ catId: '' }), 'MISSING_PARAMETER')
    assert.equal(await code({ rowId: '' }), 'MISSING_PARAMETER')
    assert.equal(await code({ fieldId: '' }), 'MISSING_PARAMETER')
    assert.equal(await code({ rowId: 'abc' }), 'INVALID_PARAMETER')
    assert.equal(await code({ fieldId: fx.f.name }), 'INVALID_PARAMETER')
    assert.equal(await code({ fieldId: 999999 }), 'INVALID_PARAMETER')
    assert.equal(await code({ rowId: fx.rowId + 1000 }), 'NOT_FOUND')
    assert.equal(
      await errorCode(
        fx.call('createField', {
          catId: fx.catId,
          name: 'Bad',
          type: 'smarttext',
          options: JSON.stringify({ templateFormat: 'pdf' }),
        })
      ),
      'INVALID_PARAMETER'
    )
    const rows = await rowsOf(fx.call, fx.catId)
    assert.equal(rows[String(fx.rowId)][String(fx.plain)], 'kept')
  })

  test('a reader, a stranger, a restricted or read-only session cannot render', async ({
    assert,
  }) => {
    ok(await fx.call('updateTableValue', { rowId: fx.rowId, fieldId: fx.plain, value: 'kept' }))
    const reader = caller(fx.book.members[0].session)
    assert.equal(await errorCode(render(fx, { fieldId: fx.plain }, reader)), 'FORBIDDEN')
    const other = await makeBook()
    assert.equal(
      await errorCode(render(fx, { fieldId: fx.plain }, caller(other.session))),
      'NOT_FOUND'
    )
    const hidden = caller(await login(fx.book.owner, { restrictions: 'hideTables' }))
    assert.equal(await errorCode(render(fx, { fieldId: fx.plain }, hidden)), 'RESTRICTED_SESSION')
    const readonly = caller(await login(fx.book.owner, { restrictions: 'readonly' }))
    assert.equal(await errorCode(render(fx, { fieldId: fx.plain }, readonly)), 'READONLY_SESSION')
    assert.equal(
      await errorCode(render(fx, { fieldId: fx.plain }, caller(null))),
      'MISSING_PARAMETER'
    )
    const rows = await rowsOf(fx.call, fx.catId)
    assert.equal(rows[String(fx.rowId)][String(fx.plain)], 'kept')
  })
})
