import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { rowTableName } from '#plugins/tables/lib/field_types'
import { pivotIndexColumns, pivotIndexName } from '#plugins/tables/services/pivot_index'
import { addField, addRows, caller, makeBook, ok } from '../helpers/tables.js'

/**
 * getTablePivotValues groups count, min and max first by the axes' stored values and folds
 * those groups into the keys (PivotService.pregroupedSql), in the order of the table's pivot
 * index once its settings are saved (PivotService.ensureIndex). Every answer here is checked
 * against groups computed in JavaScript from the rows written, before and after the index
 * exists: empty values, month, year and week boundaries, a date with a time (not pre-grouped),
 * deleted rows and rows changed after the index was made.
 */
type Data = { color: string; day: string; at: string; active: boolean; qty: string }

// color, day (date), at (date with a time), active, qty
const DATA: Data[] = [
  { color: 'red', day: '2023-12-31', at: '2023-12-31 23:59:59', active: true, qty: '5' },
  { color: 'red', day: '2024-01-01', at: '2024-01-01 00:00:00', active: false, qty: '7' },
  { color: 'blue', day: '2024-01-31', at: '2024-01-31 23:59:59', active: true, qty: '12' },
  { color: 'blue', day: '2024-02-01', at: '2024-02-01 00:00:00', active: false, qty: '' },
  { color: '', day: '2024-02-29', at: '', active: false, qty: '30' },
  { color: 'green', day: '', at: '2024-03-01 12:00:00', active: true, qty: '1' },
  { color: '', day: '', at: '', active: false, qty: '' },
  { color: 'red', day: '2024-12-30', at: '2024-12-29 10:00:00', active: true, qty: '3' },
  { color: 'red', day: '2024-01-31', at: '2024-01-31 08:00:00', active: false, qty: '9' },
]

/** The ISO week's Monday of 'YYYY-MM-DD' (the key the pivot gives a week). */
function mondayOf(day: string) {
  const date = new Date(`${day}T00:00:00Z`)
  const back = (date.getUTCDay() + 6) % 7
  return new Date(date.getTime() - back * 86_400_000).toISOString().slice(0, 10)
}

const keyOf = (value: string, grouping: string) => {
  if (value === '') return null
  if (grouping === 'year') return value.slice(0, 4)
  if (grouping === 'month') return value.slice(0, 7)
  if (grouping === 'week') return mondayOf(value.slice(0, 10))
  return value.slice(0, 10)
}

/** The expected cells {hzKey|vtKey: value} of `rows` by color x a date field. */
function expected(
  rows: Data[],
  date: 'day' | 'at',
  grouping: string,
  operation: 'count' | 'min' | 'max'
) {
  const cells = new Map<string, number | null>()
  for (const row of rows) {
    const key = `${row.color || null}|${keyOf(row[date], grouping)}`
    const value = operation === 'count' ? 1 : row.qty === '' ? null : Number(row.qty)
    const previous = cells.has(key) ? cells.get(key)! : operation === 'count' ? 0 : null
    if (operation === 'count') cells.set(key, (previous ?? 0) + 1)
    else if (value === null) cells.set(key, previous)
    else if (previous === null) cells.set(key, value)
    else cells.set(key, operation === 'min' ? Math.min(previous, value) : Math.max(previous, value))
  }
  return cells
}

/** The answer's cells in the same form (empty cells left out, as `expected` has none). */
function cellsOf(pivot: any) {
  const cells = new Map<string, number | null>()
  pivot.vt.forEach((vt: any, line: number) =>
    pivot.hz.forEach((hz: any, column: number) => {
      const value = pivot.values[line][column]
      if (value !== 0 && value !== null) cells.set(`${hz.key}|${vt.key}`, value)
    })
  )
  return cells
}

const withoutEmpty = (cells: Map<string, number | null>) =>
  new Map([...cells].filter(([, value]) => value !== 0 && value !== null))

test.group('tables: getTablePivotValues pre-grouped and its pivot index', (group) => {
  let call: ReturnType<typeof caller>
  let catId: number
  let f: Record<'color' | 'day' | 'at' | 'active' | 'qty', number>
  let rows: Data[]
  let ids: number[]

  group.setup(async () => {
    const book = await makeBook([])
    call = caller(book.session)
    catId = ok(await call('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Pivot index' }))
      .catId as number
    f = {
      color: await addField(call, catId, 'Color', 'enum', { values: ['red', 'blue', 'green'] }),
      day: await addField(call, catId, 'Day', 'date'),
      at: await addField(call, catId, 'At', 'date', { withTime: true }),
      active: await addField(call, catId, 'Active', 'checkbox'),
      qty: await addField(call, catId, 'Qty', 'integer'),
    }
    rows = DATA.map((row) => ({ ...row }))
    ids = await addRows(
      call,
      rows.map((row) => ({
        [f.color]: row.color,
        [f.day]: row.day,
        [f.at]: row.at,
        [f.active]: row.active ? '1' : '0',
        [f.qty]: row.qty,
      }))
    )
  })

  const pivotOf = async (params: Record<string, unknown>) =>
    ok(await call('getTablePivotValues', { catId, ...params })).pivot

  /** Every grouping and aggregate of color x Day and color x At against `expected`. */
  async function checkAll(assert: any) {
    for (const date of ['day', 'at'] as const)
      for (const grouping of ['day', 'week', 'month', 'year'])
        for (const operation of ['count', 'min', 'max'] as const) {
          const pivot = await pivotOf({
            p_field_hz: f.color,
            p_field_vt: f[date],
            dateGrouping: grouping,
            p_field_co: operation,
            ...(operation === 'count' ? {} : { p_field_va: f.qty }),
          })
          assert.deepEqual(
            cellsOf(pivot),
            withoutEmpty(expected(rows, date, grouping, operation)),
            `${operation} by color x ${grouping} of ${date}`
          )
          // The empty group comes last, when there is one; the totals count every row.
          const empty = rows.some((row) => row.color === '')
          assert.equal(pivot.hz.at(-1).key === null, empty, `${operation} ${grouping} ${date}`)
          if (operation === 'count') assert.equal(pivot.totals.all, rows.length)
        }
  }

  test('answers the groups the rows make, without a pivot index', async ({ assert }) => {
    assert.deepEqual(await pivotIndexColumns(catId), [])
    await checkAll(assert)
    // A checkbox and a month: the keys 0 and 1, every row in one of them.
    const pivot = await pivotOf({ p_field_hz: f.active, p_field_vt: f.day, p_field_co: 'count' })
    assert.deepEqual(
      pivot.hz.map((key: any) => key.key),
      [0, 1]
    )
    assert.deepEqual(pivot.totals.hz, [
      rows.filter((row) => !row.active).length,
      rows.filter((row) => row.active).length,
    ])
  })

  test('saving pivot settings makes the index; the answers stay the same', async ({ assert }) => {
    ok(
      await call('updateTable', {
        catId,
        prefs: JSON.stringify({ p_field_hz: f.color, p_field_vt: f.day, p_field_co: 'count' }),
      })
    )
    const table = rowTableName(catId)
    const columns = await pivotIndexColumns(catId)
    assert.lengthOf(columns, 2)
    // The grouping reads the index in order: no sort of the rows, no table access.
    if (db.connection().dialect.name === 'mysql') {
      const [plan] = await db.rawQuery(
        `EXPLAIN SELECT \`${columns[0]}\`, \`${columns[1]}\`, COUNT(*) FROM \`${table}\` t GROUP BY \`${columns[0]}\`, \`${columns[1]}\``
      )
      assert.equal(plan[0].key, pivotIndexName(catId))
      assert.include(plan[0].Extra, 'Using index')
      assert.notInclude(plan[0].Extra, 'filesort')
    } else {
      const plan = await db.rawQuery(
        `EXPLAIN QUERY PLAN SELECT "${columns[0]}", "${columns[1]}", COUNT(*) FROM "${table}" t GROUP BY "${columns[0]}", "${columns[1]}"`
      )
      const details = plan.map((step: any) => step.detail).join('; ')
      assert.include(details, `USING COVERING INDEX ${pivotIndexName(catId)}`)
      assert.notInclude(details, 'TEMP B-TREE')
    }
    await checkAll(assert)
    // The saved pivot itself (no field given).
    const saved = await pivotOf({})
    assert.deepEqual(cellsOf(saved), withoutEmpty(expected(rows, 'day', 'month', 'count')))
  })

  test('writes and deletes after the index are counted', async ({ assert }) => {
    ok(
      await call('updateTableValue', { rowId: String(ids[0]), fieldId: f.day, value: '2024-03-31' })
    )
    rows[0].day = '2024-03-31'
    ok(await call('updateTableValue', { rowId: String(ids[4]), fieldId: f.color, value: 'green' }))
    rows[4].color = 'green'
    ok(await call('deleteTableRows', { catId, rows: JSON.stringify([ids[1], ids[6]]) }))
    rows = rows.filter((_, index) => index !== 1 && index !== 6)
    await checkAll(assert)
  })

  test('a field the index names can be deleted; its index goes with it', async ({ assert }) => {
    assert.lengthOf(await pivotIndexColumns(catId), 2)
    ok(await call('deleteField', { fieldId: f.day }))
    assert.deepEqual(await pivotIndexColumns(catId), [])
    const pivot = await pivotOf({ p_field_hz: f.color, p_field_vt: f.at, dateGrouping: 'month' })
    assert.deepEqual(cellsOf(pivot), withoutEmpty(expected(rows, 'at', 'month', 'count')))
    // Settings naming no indexable field make none (a link or multi enum axis, or none at all).
    ok(await call('updateTable', { catId, prefs: JSON.stringify({}) }))
    assert.deepEqual(await pivotIndexColumns(catId), [])
  })
})
