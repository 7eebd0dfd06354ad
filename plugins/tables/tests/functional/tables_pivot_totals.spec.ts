import { test } from '@japa/runner'
import { addField, addRows, caller, makeBook, ok } from '../helpers/tables.js'

/**
 * getTablePivotValues folds its totals from the cells' groups when it can (PivotService.foldable:
 * count, min or max by enum, date or checkbox axes): every total of a two-way pivot is checked
 * here against figures counted by hand, for each aggregate that folds.
 */
test.group('tables: getTablePivotValues totals folded from the cells', (group) => {
  let pivotOf: (params: Record<string, unknown>) => Promise<any>
  let f: Record<'color' | 'day' | 'qty', number>

  group.setup(async () => {
    const book = await makeBook([])
    const call = caller(book.session)
    const { catId } = ok(
      await call('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Sales totals' })
    )
    f = {
      color: await addField(call, catId, 'Color', 'enum', { values: ['red', 'blue', 'green'] }),
      day: await addField(call, catId, 'Day', 'date'),
      qty: await addField(call, catId, 'Qty', 'integer'),
    }
    // color, day, qty
    const data = [
      ['red', '2024-01-10', '5'],
      ['blue', '2024-01-15', '12'],
      ['red', '2024-02-01', '7'],
      ['', '', ''],
      ['blue', '2024-02-29', '30'],
      ['red', '2024-01-14', '1'],
    ]
    await addRows(
      call,
      data.map(([color, day, qty]) => ({ [f.color]: color, [f.day]: day, [f.qty]: qty }))
    )
    pivotOf = async (params) =>
      ok(await call('getTablePivotValues', { b_o: book.b_o, catId, ...params })).pivot
  })

  // Columns: red, blue, (empty); lines: 2024-01, 2024-02, (empty).
  const cases = {
    count: {
      values: [
        [2, 1, 0],
        [1, 1, 0],
        [0, 0, 1],
      ],
      totals: { hz: [3, 2, 1], vt: [3, 2, 1], all: 6 },
    },
    min: {
      values: [
        [1, 12, null],
        [7, 30, null],
        [null, null, null],
      ],
      totals: { hz: [1, 12, null], vt: [1, 7, null], all: 1 },
    },
    max: {
      values: [
        [5, 12, null],
        [7, 30, null],
        [null, null, null],
      ],
      totals: { hz: [7, 30, null], vt: [12, 30, null], all: 30 },
    },
  }
  for (const [operation, expected] of Object.entries(cases)) {
    test(`${operation} by enum x month: cells and every total`, async ({ assert }) => {
      const pivot = await pivotOf({
        p_field_hz: f.color,
        p_field_vt: f.day,
        p_field_co: operation,
        ...(operation === 'count' ? {} : { p_field_va: f.qty }),
      })
      assert.deepEqual(
        pivot.hz.map((key: any) => key.key),
        ['red', 'blue', null]
      )
      assert.deepEqual(
        pivot.vt.map((key: any) => key.key),
        ['2024-01', '2024-02', null]
      )
      assert.deepEqual(pivot.values, expected.values)
      assert.deepEqual(pivot.totals, expected.totals)
    })
  }
})
