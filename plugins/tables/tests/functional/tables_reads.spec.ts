import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { RowSelection, cellColumns } from '../../services/row_selection.js'
import { TableAccess } from '../../services/table_access.js'
import { ALL_FORMS } from '#tests/helpers/rpc'
import { caller, columnOf, errorCode, makeBook, ok, ownerActor } from '../helpers/tables.js'

/** One table with typed fields and 6 rows of known values. */
async function fixture() {
  const book = await makeBook()
  const call = caller(book.session)
  const { catId, tabId } = ok(
    await call('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Items', code: 'items' })
  )
  const field = async (name: string, type: string, options: Record<string, unknown> = {}) =>
    ok(
      await call('createField', {
        catId,
        name,
        type,
        code: name.toLowerCase(),
        options: JSON.stringify(options),
      })
    ).fieldId as number
  const f = {
    name: await field('Name', 'shorttext'),
    qty: await field('Qty', 'integer'),
    day: await field('Day', 'date'),
    done: await field('Done', 'checkbox'),
    color: await field('Color', 'enum', { values: ['red', 'blue', 'green'] }),
    tags: await field('Tags', 'enum', { values: ['x', 'y', 'z'], multiple: true }),
    who: await field('Who', 'user'),
  }
  const today = new Date().toISOString().slice(0, 10)
  const data = [
    ['apple pie', '5', '2024-01-10', '1', 'red', 'x,y', book.b_o],
    ['banana split', '12', '2024-02-20', '0', 'blue', 'y', ''],
    ['cherry tart', '7', today, '1', 'green', 'x,y,z', book.b_o],
    ['apple crumble', '', '', '0', '', '', ''],
    ['date cake', '30', '2023-12-31', '0', 'red', 'z', ''],
    ['Elderberry 100%', '1', '2024-01-10 18:30:00', '1', 'blue', 'x', ''],
  ]
  const keys = Object.values(f)
  const rows: Record<string, Record<string, string>> = {}
  data.forEach(
    (values, i) =>
      (rows[`tmp${i}`] = Object.fromEntries(values.map((value, j) => [String(keys[j]), value])))
  )
  const created = ok(await call('createOrUpdateTableRows', { rows: JSON.stringify(rows) }))
  const ids: number[] = created.newRows.map((row: any) => row.id)
  return { book, call, catId, tabId, f, ids, today }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

/** The names of the rows an answer (columns format) shows, in order. */
const names = (answer: Record<string, any>, fx: Fixture) => columnOf(answer, fx.f.name)

/** A filter group with one filter on `fieldId`. */
const oneFilter = (fieldId: number, predicate: string, operand?: unknown) => ({
  operator: 'and',
  filters: [{ field_id: fieldId, filter_type: 'text', json: { predicate, operand } }],
})

/** The names getTableValues answers for a dynamic filter group. */
async function filtered(fx: Fixture, group: unknown) {
  const answer = ok(
    await fx.call('getTableValues', {
      catId: fx.catId,
      filterRowIds: JSON.stringify({ applyViewFilters: { filterGroup: group } }),
    })
  )
  return names(answer, fx)
}

/** A saved view: rows whose color is red, by quantity descending. */
async function redByQty(fx: Fixture) {
  const { viewId } = ok(
    await fx.call('createView', {
      catId: fx.catId,
      name: 'Red by qty',
      filterGroup: JSON.stringify({
        operator: 'and',
        filters: [
          { field_id: fx.f.color, filter_type: 'text', json: { predicate: 'is', operand: 'red' } },
          { field_id: fx.f.qty, filter_type: 'sort', json: { predicate: 'desc' } },
        ],
      }),
    })
  )
  return viewId as number
}

test.group('tables: page formats and paging', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('format rows: each row with its cells by field name, typed', async ({ assert }) => {
    const answer = ok(await fx.call('getTableValues', { catId: fx.catId, format: 'rows' }))
    const row = answer.tableValues.rows[1]
    assert.equal(row.id, fx.ids[1])
    assert.deepEqual(row.fields.Name, { value: 'banana split' })
    assert.strictEqual(row.fields.Qty.value, 12)
    assert.deepEqual(row.fields.Tags, { value: ['y'], text: 'y' })
  })

  test('format diff_ready_rows: rows keyed by id, cells by field id', async ({ assert }) => {
    const answer = ok(
      await fx.call('getTableValues', { catId: fx.catId, format: 'diff_ready_rows' })
    )
    assert.strictEqual(answer.tableValues.rows[fx.ids[0]][fx.f.qty], 5)
    assert.strictEqual(answer.tableValues.rows[fx.ids[3]][fx.f.qty], null)
  })

  test('format columns (the default): each field with its values by row', async ({ assert }) => {
    const answer = ok(await fx.call('getTableValues', { catId: fx.catId }))
    const qty = answer.tableValues.fields.find((field: any) => field.id === fx.f.qty)
    assert.equal(qty.name, 'Qty')
    assert.deepEqual(qty.values[0], { id: fx.ids[0], value: 5 })
    assert.lengthOf(qty.values, 6)
  })

  test('offset and maxRows choose the page; rowInfos give each row its order and index', async ({
    assert,
  }) => {
    const answer = ok(
      await fx.call('getTableValues', {
        catId: fx.catId,
        format: 'rows',
        maxRows: '2',
        offset: '1',
      })
    )
    assert.deepEqual(
      answer.tableValues.rows.map((row: any) => row.id),
      [fx.ids[1], fx.ids[2]]
    )
    assert.strictEqual(answer.tableValues.rowInfosLength, 2)
    assert.deepEqual(answer.tableValues.rowInfos[fx.ids[1]], { order: fx.ids[1], index: 1 })
  })

  test('past the end: rowInfos is [] and rowInfosLength 0', async ({ assert }) => {
    const past = ok(await fx.call('getTableValues', { catId: fx.catId, offset: '100' }))
    assert.deepEqual(past.tableValues.rowInfos, [])
    assert.strictEqual(past.tableValues.rowInfosLength, 0)
  })

  test('past the end in the rows format: rows is []', async ({ assert }) => {
    const past = ok(
      await fx.call('getTableValues', { catId: fx.catId, offset: '100', format: 'rows' })
    )
    assert.deepEqual(past.tableValues.rows, [])
  })

  test("a page reads its fields' columns; metadata older than a dropped column reads them all", async ({
    assert,
  }) => {
    const access = await app.container.make(TableAccess)
    const rowSelection = await app.container.make(RowSelection)
    const actor = ownerActor(fx.book)
    const scope = await access.forCategory(actor, fx.catId, 'read')
    const columns = cellColumns(scope.category)
    for (const field of scope.category.fields) assert.include(columns, field.column!)
    assert.notInclude(columns, 'created_at')
    const selection = await rowSelection.selection(scope, actor, undefined)
    const narrow = await rowSelection.selectRows(scope.category, selection, {
      offset: 0,
      limit: 2,
      columns,
    })
    assert.deepEqual(
      narrow.map((row) => Number(row.id)),
      fx.ids.slice(0, 2)
    )
    assert.notProperty(narrow[0], 'created_at')
    // A field deleted between a request's metadata read and its page read: the statement naming
    // its column fails, and the page is read with every column instead.
    const stale = {
      ...scope.category,
      fields: [
        ...scope.category.fields,
        { ...scope.category.fields[0], id: 999_999, column: 'f_gone' },
      ],
    }
    const rows = await rowSelection.selectRows(stale, selection, {
      offset: 0,
      limit: 2,
      columns: cellColumns(stale),
    })
    assert.deepEqual(
      rows.map((row) => Number(row.id)),
      fx.ids.slice(0, 2)
    )
    assert.property(rows[0], 'created_at')
  })

  test('an unknown format is INVALID_PARAMETER', async ({ assert }) => {
    assert.equal(
      await errorCode(fx.call('getTableValues', { catId: fx.catId, format: 'bogus' })),
      'INVALID_PARAMETER'
    )
  })

  test('maxComments adds `users` (none without comment fields)', async ({ assert }) => {
    const answer = ok(await fx.call('getTableValues', { catId: fx.catId, maxComments: '3' }))
    assert.deepEqual(answer.tableValues.users, {})
  })

  test('maxComments outside 1..10 is INVALID_PARAMETER', async ({ assert }) => {
    assert.equal(
      await errorCode(fx.call('getTableValues', { catId: fx.catId, maxComments: '11' })),
      'INVALID_PARAMETER'
    )
  })

  test('getDependencies lists the linked tables: none here', async ({ assert }) => {
    const answer = ok(await fx.call('getTableValues', { catId: fx.catId, getDependencies: 'true' }))
    assert.deepEqual(answer.tableValues.dependencies, [])
  })

  test('a b_o that is not the owner of the table is NOT_FOUND', async ({ assert }) => {
    const answer = await fx.call('getTableValues', { catId: fx.catId, b_o: 'someone-else' })
    assert.equal(answer.errorCode, 'NOT_FOUND')
  })
})

test.group('tables: filterRowIds', (group) => {
  let fx: Fixture
  let viewId: number
  const apples = {
    operator: 'and',
    filters: [
      {
        id: 'tmp0',
        field_id: 0,
        filter_type: 'text',
        json: { predicate: 'contains', operand: 'apple' },
      },
    ],
  }
  group.setup(async () => {
    fx = await fixture()
    apples.filters[0].field_id = fx.f.name
    viewId = await redByQty(fx)
  })

  test('a comma list selects those rows', async ({ assert }) => {
    const answer = ok(
      await fx.call('getTableValues', {
        catId: fx.catId,
        filterRowIds: `${fx.ids[0]},${fx.ids[2]}`,
      })
    )
    assert.deepEqual(names(answer, fx), ['apple pie', 'cherry tart'])
  })

  test('!list selects every row but those', async ({ assert }) => {
    const answer = ok(
      await fx.call('getTableValues', {
        catId: fx.catId,
        filterRowIds: `!${fx.ids[0]},${fx.ids[2]}`,
      })
    )
    assert.lengthOf(names(answer, fx), 4)
  })

  test('a dynamic group in {$self} form, as bracket form and as JSON text, selects the same rows')
    .with(ALL_FORMS)
    .run(async ({ assert }, form) => {
      const bracket = ok(
        await fx.call(
          'getTableValues',
          { catId: fx.catId, filterRowIds: { applyViewFilters: { filterGroup: apples } } },
          form
        )
      )
      assert.deepEqual(names(bracket, fx), ['apple pie', 'apple crumble'])
      const json = ok(
        await fx.call(
          'getTableValues',
          {
            catId: fx.catId,
            filterRowIds: JSON.stringify({ applyViewFilters: { filterGroup: apples } }),
          },
          form
        )
      )
      assert.deepEqual(names(json, fx), ['apple pie', 'apple crumble'])
    })

  test('row_ids with exclude true are taken out of the filtered rows', async ({ assert }) => {
    const answer = ok(
      await fx.call('getTableValues', {
        catId: fx.catId,
        filterRowIds: JSON.stringify({
          row_ids: [fx.ids[0]],
          exclude: 'yes',
          applyViewFilters: { filterGroup: apples },
        }),
      })
    )
    assert.deepEqual(names(answer, fx), ['apple crumble'])
  })

  test('row_ids with exclude false prevail over applyViewFilters', async ({ assert }) => {
    const answer = ok(
      await fx.call('getTableValues', {
        catId: fx.catId,
        filterRowIds: JSON.stringify({
          row_ids: [fx.ids[1]],
          exclude: false,
          applyViewFilters: { filterGroup: apples },
        }),
      })
    )
    assert.deepEqual(names(answer, fx), ['banana split'])
  })

  test('applyViewFilters with a view id filters and sorts as the view', async ({ assert }) => {
    const answer = ok(
      await fx.call('getTableValues', {
        catId: fx.catId,
        filterRowIds: { applyViewFilters: String(viewId) },
      })
    )
    assert.deepEqual(names(answer, fx), ['date cake', 'apple pie'])
  })

  test('applyViewFilters true is the view of the tab the reader opened last', async ({
    assert,
  }) => {
    const { tabId } = ok(await fx.call('createTab', { catId: fx.catId, view_id: String(viewId) }))
    ok(await fx.call('getTableValues', { catId: fx.catId, tabId: String(tabId), maxRows: '1' }))
    const answer = ok(
      await fx.call('getTableValues', {
        catId: fx.catId,
        filterRowIds: { applyViewFilters: 'true' },
      })
    )
    assert.deepEqual(names(answer, fx), ['date cake', 'apple pie'])
  })

  test('computeTableOperation counts the rows of a view', async ({ assert }) => {
    const count = ok(
      await fx.call('computeTableOperation', {
        catId: fx.catId,
        operation: 'count',
        filterRowIds: JSON.stringify({ applyViewFilters: viewId }),
      })
    )
    assert.strictEqual(count.result, 2)
  })

  test('computeTableOperation knows count only', async ({ assert }) => {
    assert.equal(
      await errorCode(fx.call('computeTableOperation', { catId: fx.catId, operation: 'sum' })),
      'INVALID_PARAMETER'
    )
  })

  test('getAllViews gives the row ids of every view in its order, and no rowInfos', async ({
    assert,
  }) => {
    const all = ok(await fx.call('getTableValues', { catId: fx.catId, getAllViews: 'true' }))
    assert.notProperty(all.tableValues, 'rowInfos')
    assert.deepEqual(all.tableValues.views.find((view: any) => view.id === viewId).rowIds, [
      fx.ids[4],
      fx.ids[0],
    ])
  })
})

test.group('tables: filter predicates end to end', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('{field} {predicate} {label}')
    .with([
      { field: 'name', predicate: 'is', operand: 'date cake', label: '', expected: ['date cake'] },
      {
        field: 'name',
        predicate: 'contains',
        operand: '100%',
        label: '(a LIKE wildcard)',
        expected: ['Elderberry 100%'],
      },
      {
        field: 'name',
        predicate: 'begins with',
        operand: 'cherry',
        label: '',
        expected: ['cherry tart'],
      },
      {
        field: 'name',
        predicate: 'ends with',
        operand: 'split',
        label: '',
        expected: ['banana split'],
      },
      {
        field: 'qty',
        predicate: 'is_empty',
        operand: undefined,
        label: '',
        expected: ['apple crumble'],
      },
      { field: 'qty', predicate: '=', operand: '7', label: '', expected: ['cherry tart'] },
      { field: 'qty', predicate: '<', operand: '5', label: '', expected: ['Elderberry 100%'] },
      {
        field: 'qty',
        predicate: '<=',
        operand: '5',
        label: '',
        expected: ['apple pie', 'Elderberry 100%'],
      },
      { field: 'qty', predicate: '>', operand: '12', label: '', expected: ['date cake'] },
      {
        field: 'qty',
        predicate: '≥',
        operand: '12',
        label: '',
        expected: ['banana split', 'date cake'],
      },
      {
        field: 'qty',
        predicate: 'between',
        operand: [6, 12],
        label: '',
        expected: ['banana split', 'cherry tart'],
      },
      {
        field: 'day',
        predicate: 'before',
        operand: '2024-01-01',
        label: '',
        expected: ['date cake'],
      },
      {
        field: 'day',
        predicate: 'after',
        operand: '2024-01-10',
        label: '',
        expected: ['banana split', 'cherry tart'],
      },
      {
        field: 'day',
        predicate: 'on',
        operand: '2024-01-10',
        label: '(with and without a time)',
        expected: ['apple pie', 'Elderberry 100%'],
      },
      { field: 'day', predicate: 'within', operand: 'today', label: '', expected: ['cherry tart'] },
      {
        field: 'day',
        predicate: 'within',
        operand: 'last 7 days',
        label: '',
        expected: ['cherry tart'],
      },
      {
        field: 'day',
        predicate: 'within',
        operand: 'this_week',
        label: '',
        expected: ['cherry tart'],
      },
      {
        field: 'done',
        predicate: 'checked',
        operand: undefined,
        label: '',
        expected: ['apple pie', 'cherry tart', 'Elderberry 100%'],
      },
      {
        field: 'done',
        predicate: 'unchecked',
        operand: undefined,
        label: '',
        expected: ['banana split', 'apple crumble', 'date cake'],
      },
      {
        field: 'color',
        predicate: 'any of',
        operand: ['red', 'green'],
        label: '',
        expected: ['apple pie', 'cherry tart', 'date cake'],
      },
      {
        field: 'color',
        predicate: 'none of',
        operand: 'red,green',
        label: '(empty included)',
        expected: ['banana split', 'apple crumble', 'Elderberry 100%'],
      },
      {
        field: 'tags',
        predicate: 'any of',
        operand: ['z'],
        label: '',
        expected: ['cherry tart', 'date cake'],
      },
      {
        field: 'tags',
        predicate: 'all of',
        operand: ['x', 'y'],
        label: '',
        expected: ['apple pie', 'cherry tart'],
      },
      {
        field: 'tags',
        predicate: 'none of',
        operand: ['x'],
        label: '',
        expected: ['banana split', 'apple crumble', 'date cake'],
      },
      {
        field: 'who',
        predicate: 'is me',
        operand: undefined,
        label: '',
        expected: ['apple pie', 'cherry tart'],
      },
    ])
    .run(async ({ assert }, { field, predicate, operand, expected }) => {
      const fieldId = fx.f[field as keyof Fixture['f']]
      assert.deepEqual(await filtered(fx, oneFilter(fieldId, predicate, operand)), expected)
    })

  test('{field} {predicate} matches every row but the {count} others')
    .with([
      { field: 'name', predicate: 'is not', operand: 'date cake', count: 5 },
      { field: 'name', predicate: 'does not contain', operand: 'apple', count: 4 },
      { field: 'qty', predicate: 'is not empty', operand: undefined, count: 5 },
      { field: 'qty', predicate: '≠', operand: '7', count: 5 },
    ])
    .run(async ({ assert }, { field, predicate, operand, count }) => {
      const fieldId = fx.f[field as keyof Fixture['f']]
      assert.lengthOf(await filtered(fx, oneFilter(fieldId, predicate, operand)), count)
    })

  test("day is today's date", async ({ assert }) => {
    assert.deepEqual(await filtered(fx, oneFilter(fx.f.day, 'is', fx.today)), ['cherry tart'])
  })

  test('who is the owner code', async ({ assert }) => {
    assert.deepEqual(await filtered(fx, oneFilter(fx.f.who, 'is', fx.book.b_o)), [
      'apple pie',
      'cherry tart',
    ])
  })

  test('a nested AND group inside an OR group', async ({ assert }) => {
    const shown = await filtered(fx, {
      operator: 'or',
      filters: [
        {
          field_id: fx.f.name,
          filter_type: 'text',
          json: { predicate: 'is', operand: 'date cake' },
        },
        {
          filter_type: 'group',
          operator: 'and',
          filters: [
            { field_id: fx.f.color, json: { predicate: 'is', operand: 'blue' } },
            { field_id: fx.f.done, json: { predicate: 'checked' } },
          ],
        },
      ],
    })
    assert.deepEqual(shown, ['date cake', 'Elderberry 100%'])
  })

  test('group-by first, then the sort within each group (empty first)', async ({ assert }) => {
    const shown = await filtered(fx, {
      operator: 'and',
      filters: [
        { field_id: fx.f.color, filter_type: 'groupby', json: { predicate: 'asc' } },
        { field_id: fx.f.qty, filter_type: 'sort', json: { predicate: 'desc' } },
      ],
    })
    assert.deepEqual(shown, [
      'apple crumble',
      'banana split',
      'Elderberry 100%',
      'cherry tart',
      'date cake',
      'apple pie',
    ])
  })

  test('an unknown predicate is INVALID_PARAMETER', async ({ assert }) => {
    const answer = await fx.call('getTableValues', {
      catId: fx.catId,
      filterRowIds: JSON.stringify({
        applyViewFilters: { filterGroup: oneFilter(fx.f.qty, 'sounds like', 'x') },
      }),
    })
    assert.equal(answer.errorCode, 'INVALID_PARAMETER')
  })

  test('a field of another table is INVALID_PARAMETER', async ({ assert }) => {
    const answer = await fx.call('getTableValues', {
      catId: fx.catId,
      filterRowIds: JSON.stringify({
        applyViewFilters: { filterGroup: oneFilter(999999, 'is', 'x') },
      }),
    })
    assert.equal(answer.errorCode, 'INVALID_PARAMETER')
  })
})

test.group('tables: other reads', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('getNamedTableValues names the table and its fields by code, in the order given', async ({
    assert,
  }) => {
    const named = ok(
      await fx.call('getNamedTableValues', {
        b_o: fx.book.b_o,
        b_c: fx.book.b_c,
        catCode: 'items',
        fieldCodes: 'qty, name',
      })
    )
    assert.deepEqual(
      named.tableValues.fields.map((field: any) => field.id),
      [fx.f.qty, fx.f.name]
    )
  })

  test('getNamedTableValues: an unknown table or field code is refused', async ({ assert }) => {
    const base = { b_o: fx.book.b_o, b_c: fx.book.b_c }
    assert.equal(
      await errorCode(fx.call('getNamedTableValues', { ...base, catCode: 'nope' })),
      'NOT_FOUND'
    )
    assert.equal(
      await errorCode(
        fx.call('getNamedTableValues', { ...base, catCode: 'items', fieldCodes: 'nope' })
      ),
      'INVALID_PARAMETER'
    )
  })

  test('getTableValueSubset answers rows in the order of rowIds, values in the order of fieldIds', async ({
    assert,
  }) => {
    const subset = ok(
      await fx.call('getTableValueSubset', {
        catId: fx.catId,
        fieldIds: `${fx.f.qty},${fx.f.name}`,
        rowIds: `${fx.ids[1]},${fx.ids[0]}`,
      })
    )
    assert.deepEqual(subset.tableValues, [
      [12, 'banana split'],
      [5, 'apple pie'],
    ])
    assert.equal(subset.catId, fx.catId)
  })

  test('getTableRows pages rows in the rows format', async ({ assert }) => {
    const legacy = ok(await fx.call('getTableRows', { catId: fx.catId, pageSize: '2', page: '2' }))
    assert.deepEqual(
      legacy.rows.map((row: any) => row.id),
      [fx.ids[2], fx.ids[3]]
    )
    assert.deepEqual([legacy.page, legacy.pageSize], [2, 2])
    assert.notProperty(legacy, 'table')
  })

  test('getTableRows with getTableInfo adds the table, its views with their row ids', async ({
    assert,
  }) => {
    const legacy = ok(
      await fx.call('getTableRows', { catId: fx.catId, pageSize: '2', getTableInfo: 'true' })
    )
    assert.deepEqual(
      legacy.table.categories.map((category: any) => category.id),
      [fx.catId]
    )
    assert.lengthOf(legacy.table.categories[0].views[0].rowIds, 6)
  })

  test('getTableRows with rowIds reads those rows only', async ({ assert }) => {
    const legacy = ok(
      await fx.call('getTableRows', { catId: fx.catId, rowIds: `${fx.ids[4]},${fx.ids[1]}` })
    )
    assert.deepEqual(
      legacy.rows.map((row: any) => row.id),
      [fx.ids[1], fx.ids[4]]
    )
  })

  test('listTableRowsById: maxRows rows with their ids and infos', async ({ assert }) => {
    const listed = ok(await fx.call('listTableRowsById', { catId: fx.catId, maxRows: '3' }))
    assert.strictEqual(listed.tableValues.rowInfosLength, 3)
    assert.deepEqual(listed.tableValues.rowIds, fx.ids.slice(0, 3))
  })

  test('listTableRowsById: only rows modified after lastModifiedAfter (unix time or date)', async ({
    assert,
  }) => {
    const future = Math.floor(Date.now() / 1000) + 3600
    const none = ok(
      await fx.call('listTableRowsById', { catId: fx.catId, lastModifiedAfter: String(future) })
    )
    assert.deepEqual(none.tableValues.rowIds, [])
    const all = ok(
      await fx.call('listTableRowsById', { catId: fx.catId, lastModifiedAfter: '2000-01-01' })
    )
    assert.lengthOf(all.tableValues.rowIds, 6)
    const ignored = ok(
      await fx.call('listTableRowsById', { catId: fx.catId, lastModifiedAfter: 'not a date' })
    )
    assert.lengthOf(ignored.tableValues.rowIds, 6)
  })

  test("listTableRowsById through a view: the view's rows", async ({ assert }) => {
    const viewId = await redByQty(fx)
    const listed = ok(await fx.call('listTableRowsById', { catId: fx.catId, viewId }))
    assert.deepEqual(listed.tableValues.rowIds, [fx.ids[4], fx.ids[0]])
  })
})

test.group('tables: structure changes', () => {
  test('updateField to shorttext converts numbers to their text; empty stays empty', async ({
    assert,
  }) => {
    const fx = await fixture()
    ok(await fx.call('updateField', { fieldId: fx.f.qty, type: 'shorttext', name: 'Quantity' }))
    const subset = ok(
      await fx.call('getTableValueSubset', {
        catId: fx.catId,
        fieldIds: String(fx.f.qty),
        rowIds: `${fx.ids[0]},${fx.ids[3]}`,
      })
    )
    assert.deepEqual(subset.tableValues, [['5'], [null]])
  })

  test('updateField from text back to double converts the values to numbers', async ({
    assert,
  }) => {
    const fx = await fixture()
    ok(await fx.call('updateField', { fieldId: fx.f.qty, type: 'shorttext' }))
    ok(await fx.call('updateField', { fieldId: fx.f.qty, type: 'double' }))
    const subset = ok(
      await fx.call('getTableValueSubset', {
        catId: fx.catId,
        fieldIds: String(fx.f.qty),
        rowIds: String(fx.ids[1]),
      })
    )
    assert.deepEqual(subset.tableValues, [[12]])
  })

  test('updateField making an enum multiple turns each value into a list', async ({ assert }) => {
    const fx = await fixture()
    ok(
      await fx.call('updateField', {
        fieldId: fx.f.color,
        type: 'enum',
        options: JSON.stringify({ multiple: true }),
      })
    )
    const subset = ok(
      await fx.call('getTableValueSubset', {
        catId: fx.catId,
        fieldIds: String(fx.f.color),
        rowIds: String(fx.ids[0]),
      })
    )
    assert.deepEqual(subset.tableValues, [[['red']]])
  })

  test('updateField renames; deleteField removes the field from the structure', async ({
    assert,
  }) => {
    const fx = await fixture()
    ok(await fx.call('updateField', { fieldId: fx.f.qty, name: 'Quantity' }))
    ok(await fx.call('deleteField', { fieldId: fx.f.done }))
    const tables = ok(
      await fx.call('getBookTables', { b_o: fx.book.b_o, b_c: fx.book.b_c, includeFields: '1' })
    )
    const fields = tables.bookTables.categories[0].fields
    assert.notInclude(
      fields.map((field: any) => field.id),
      fx.f.done
    )
    assert.equal(fields.find((field: any) => field.id === fx.f.qty).name, 'Quantity')
  })

  test('updateView renames, changes the presentation and takes a filter group in bracket form', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { viewId } = ok(await fx.call('createView', { catId: fx.catId, name: 'V' }))
    ok(
      await fx.call('updateView', {
        viewId,
        name: 'V2',
        presentation: 'card',
        filterGroup: {
          operator: 'and',
          filters: {
            0: {
              field_id: String(fx.f.name),
              filter_type: 'text',
              json: { predicate: 'contains', operand: 'a' },
            },
          },
        },
      })
    )
    const tables = ok(
      await fx.call('getBookTables', { b_o: fx.book.b_o, b_c: fx.book.b_c, includeFields: '1' })
    )
    const view = tables.bookTables.categories[0].views.find(
      (candidate: any) => candidate.id === viewId
    )
    assert.equal(view.name, 'V2')
    assert.equal(view.presentation, 'card')
    assert.equal(view.filterGroup.filters[0].json.predicate, 'contains')
  })

  test('updateView with a filter group that does not compile is INVALID_PARAMETER', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { viewId } = ok(await fx.call('createView', { catId: fx.catId, name: 'V' }))
    const filterGroup = JSON.stringify({
      operator: 'and',
      filters: [{ field_id: fx.f.name, json: { predicate: 'nope' } }],
    })
    assert.equal(
      await errorCode(fx.call('updateView', { viewId, filterGroup })),
      'INVALID_PARAMETER'
    )
  })

  test('tabs: createTab on a view, updateTab hides it, deleteTab removes it', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { viewId } = ok(await fx.call('createView', { catId: fx.catId, name: 'V' }))
    const { tabId } = ok(await fx.call('createTab', { catId: fx.catId, view_id: String(viewId) }))
    ok(await fx.call('updateTab', { tabId, hidden: 'true' }))
    const base = { b_o: fx.book.b_o, b_c: fx.book.b_c }
    const tabs = () =>
      fx.call('getBookTables', base).then((answer) => ok(answer).bookTables.tabs as any[])
    const before = await tabs()
    const hidden = before.find((tab) => tab.id === tabId)
    assert.deepEqual([hidden.view_id, hidden.hidden], [viewId, true])
    ok(await fx.call('deleteTab', { tabId }))
    const after = await tabs()
    assert.isUndefined(after.find((tab) => tab.id === tabId))
  })

  test('deleteView, then deleteTable: the table is gone', async ({ assert }) => {
    const fx = await fixture()
    const { viewId } = ok(await fx.call('createView', { catId: fx.catId, name: 'V' }))
    ok(await fx.call('deleteView', { viewId }))
    ok(await fx.call('deleteTable', { catId: fx.catId }))
    assert.equal(await errorCode(fx.call('getTableValues', { catId: fx.catId })), 'NOT_FOUND')
  })
})
