import { test } from '@japa/runner'
import { login } from '#tests/helpers/users'
import { addField, addRows, caller, errorCode, makeBook, ok } from '../helpers/tables.js'

/**
 * A table of sales with known values: color (enum), day (date), qty
 * (integer), who (user), shop (link to a Shops table, one row linking two
 * shops). Every expected figure below is counted by hand from `data`.
 */
async function fixture() {
  const book = await makeBook([{ right: 1 }])
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const shops = ok(await call('createTable', { ...base, name: 'Shops' })).catId as number
  const shopName = await addField(call, shops, 'Name', 'shorttext')
  const shopRows = await addRows(call, [{ [shopName]: 'Paris' }, { [shopName]: 'Lyon' }])
  const [paris, lyon] = shopRows
  const { catId } = ok(await call('createTable', { ...base, name: 'Sales' }))
  const field = (name: string, type: string, options?: Record<string, unknown>) =>
    addField(call, catId, name, type, options)
  const f = {
    name: await field('Name', 'shorttext'),
    color: await field('Color', 'enum', { values: ['red', 'blue', 'green'] }),
    day: await field('Day', 'date'),
    qty: await field('Qty', 'integer'),
    who: await field('Who', 'user'),
    shop: await field('Shop', 'link', { linkCatId: shops, multiple: true }),
  }
  // name, color, day, qty, who, shop
  const data: [string, string, string, string, string, string][] = [
    ['a', 'red', '2024-01-10', '5', book.b_o, `${paris}`],
    ['b', 'blue', '2024-01-15', '12', '', `${lyon}`],
    ['c', 'red', '2024-02-01', '7', book.b_o, `${paris},${lyon}`],
    ['d', '', '', '', '', ''],
    ['e', 'blue', '2024-02-29', '30', '', `${paris}`],
    ['f', 'red', '2024-01-14', '1', '', ''],
  ]
  const keys = Object.values(f)
  await addRows(
    call,
    data.map((values) => Object.fromEntries(values.map((value, j) => [String(keys[j]), value])))
  )
  return { book, call, base, catId: catId as number, f, paris, lyon }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

const pivotOf = async (fx: Fixture, params: Record<string, unknown>) =>
  ok(await fx.call('getTablePivotValues', { b_o: fx.book.b_o, catId: fx.catId, ...params })).pivot

test.group('tables: getTablePivotValues', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('counts by enum across months, the empty values a group of their own', async ({
    assert,
  }) => {
    const pivot = await pivotOf(fx, { p_field_hz: fx.f.color, p_field_vt: fx.f.day })
    assert.deepEqual(pivot.hz, [
      { key: 'red', text: 'red' },
      { key: 'blue', text: 'blue' },
      { key: null, text: '' },
    ])
    assert.deepEqual(pivot.vt, [
      { key: '2024-01', text: '2024-01' },
      { key: '2024-02', text: '2024-02' },
      { key: null, text: '' },
    ])
    assert.deepEqual(pivot.values, [
      [2, 1, 0],
      [1, 1, 0],
      [0, 0, 1],
    ])
    assert.deepEqual(pivot.totals, { hz: [3, 2, 1], vt: [3, 2, 1], all: 6 })
  })

  test('sums, averages, minima and maxima of a number field', async ({ assert }) => {
    const by = async (p_field_co: string) =>
      pivotOf(fx, { p_field_hz: fx.f.color, p_field_va: fx.f.qty, p_field_co })
    const hzOf = async (p_field_co: string) => {
      const pivot = await by(p_field_co)
      return pivot.totals.hz
    }
    const sum = await by('sum')
    assert.deepEqual(sum.totals, { hz: [13, 42, null], vt: [], all: 55 })
    assert.deepEqual(sum.values, [])
    assert.deepEqual(await hzOf('avg'), [13 / 3, 21, null])
    assert.deepEqual(await hzOf('min'), [1, 12, null])
    assert.deepEqual(await hzOf('max'), [7, 30, null])
  })

  test('groups dates by day, ISO week and year', async ({ assert }) => {
    const weeks = await pivotOf(fx, { p_field_hz: fx.f.day, dateGrouping: 'week' })
    // 2024-01-10 (Wed) and 2024-01-14 (Sun) share the week of Monday 8 January.
    assert.deepEqual(weeks.hz, [
      { key: '2024-01-08', text: '2024-W02' },
      { key: '2024-01-15', text: '2024-W03' },
      { key: '2024-01-29', text: '2024-W05' },
      { key: '2024-02-26', text: '2024-W09' },
      { key: null, text: '' },
    ])
    assert.deepEqual(weeks.totals.hz, [2, 1, 1, 1, 1])
    const years = await pivotOf(fx, { p_field_hz: fx.f.day, dateGrouping: 'year' })
    assert.deepEqual(years.totals.hz, [5, 1])
    const days = await pivotOf(fx, { p_field_hz: fx.f.day, dateGrouping: 'day' })
    assert.equal(days.hz.length, 6)
  })

  test('groups by link (a row linking two rows counts in both) and by user', async ({ assert }) => {
    const shops = await pivotOf(fx, { p_field_hz: fx.f.shop })
    assert.deepEqual(shops.hz, [
      { key: fx.paris, text: 'Paris' },
      { key: fx.lyon, text: 'Lyon' },
      { key: null, text: '' },
    ])
    assert.deepEqual(shops.totals.hz, [3, 2, 2])
    assert.equal(shops.totals.all, 6, 'the total counts each row once')
    const users = await pivotOf(fx, { p_field_hz: fx.f.who, p_field_vt: fx.f.shop })
    assert.deepEqual(
      users.hz.map((key: any) => key.key),
      [fx.book.b_o, null]
    )
    assert.deepEqual(users.values, [
      [2, 1],
      [1, 1],
      [0, 2],
    ])
  })

  test("applies a view's filters and filterRowIds", async ({ assert }) => {
    const { viewId } = ok(
      await fx.call('createView', {
        catId: fx.catId,
        name: 'Big',
        filterGroup: JSON.stringify({
          operator: 'and',
          filters: [
            { field_id: fx.f.qty, filter_type: 'number', json: { predicate: 'gte', operand: 7 } },
          ],
        }),
      })
    )
    const big = await pivotOf(fx, { p_field_hz: fx.f.color, viewId })
    assert.deepEqual(big.totals, { hz: [1, 2], vt: [], all: 3 })
    const dynamic = await pivotOf(fx, {
      p_field_hz: fx.f.color,
      filterRowIds: JSON.stringify({ applyViewFilters: viewId }),
    })
    assert.deepEqual(dynamic.totals, big.totals)
  })

  test("reads the table's saved pivot settings (prefs) when no field is given", async ({
    assert,
  }) => {
    ok(
      await fx.call('updateTable', {
        catId: fx.catId,
        prefs: JSON.stringify({ p_field_hz: fx.f.color, p_field_va: fx.f.qty, p_field_co: 'sum' }),
      })
    )
    const answer = ok(await fx.call('getTablePivotValues', { catId: fx.catId }))
    assert.equal(answer.settings.p_field_co, 'sum')
    assert.deepEqual(answer.pivot.totals.hz, [13, 42, null])
    const tables = ok(await fx.call('getBookTables', { ...fx.base, includeFields: 1 }))
    const sales = tables.bookTables.categories.find((c: any) => c.id === fx.catId)
    assert.equal(sales.p_field_hz, fx.f.color)
    assert.equal(sales.p_field_co, 'sum')
  })

  test('bad parameters answer documented codes', async ({ assert }) => {
    const code = (params: Record<string, unknown>) =>
      errorCode(fx.call('getTablePivotValues', { catId: fx.catId, ...params }))
    ok(await fx.call('updateTable', { catId: fx.catId, prefs: '{}' }))
    assert.equal(await code({}), 'MISSING_PARAMETER')
    assert.equal(await errorCode(fx.call('getTablePivotValues', {})), 'MISSING_PARAMETER')
    assert.equal(await code({ p_field_hz: 'abc' }), 'INVALID_PARAMETER')
    assert.equal(await code({ p_field_hz: 999999 }), 'INVALID_PARAMETER')
    assert.equal(await code({ p_field_hz: fx.f.qty }), 'INVALID_PARAMETER')
    assert.equal(await code({ p_field_hz: fx.f.color, p_field_co: 'median' }), 'INVALID_PARAMETER')
    assert.equal(await code({ p_field_hz: fx.f.color, p_field_co: 'sum' }), 'MISSING_PARAMETER')
    assert.equal(
      await code({ p_field_hz: fx.f.color, p_field_co: 'sum', p_field_va: fx.f.name }),
      'INVALID_PARAMETER'
    )
    assert.equal(await code({ p_field_hz: fx.f.day, dateGrouping: 'hour' }), 'INVALID_PARAMETER')
    assert.equal(await code({ p_field_hz: fx.f.color, viewId: 999999 }), 'INVALID_PARAMETER')
  })

  test('a stranger, a restricted session and a member below the table right get nothing', async ({
    assert,
  }) => {
    const params = { catId: fx.catId, p_field_hz: fx.f.color }
    const other = await makeBook()
    const stranger = caller(other.session)
    assert.equal(await errorCode(stranger('getTablePivotValues', params)), 'NOT_FOUND')
    const hidden = caller(await login(fx.book.owner, { restrictions: 'hideTables' }))
    assert.equal(await errorCode(hidden('getTablePivotValues', params)), 'RESTRICTED_SESSION')
    assert.equal(await errorCode(caller(null)('getTablePivotValues', params)), 'MISSING_PARAMETER')
    ok(await fx.call('updateTable', { catId: fx.catId, rights: JSON.stringify({ select: 3 }) }))
    const reader = caller(fx.book.members[0].session)
    assert.equal(await errorCode(reader('getTablePivotValues', params)), 'NOT_FOUND')
    ok(await fx.call('updateTable', { catId: fx.catId, rights: JSON.stringify({ select: 1 }) }))
    ok(await reader('getTablePivotValues', params))
  })
})
