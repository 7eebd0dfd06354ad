import { test } from '@japa/runner'
import { ALL_FORMS } from '#tests/helpers/rpc'
import { caller, errorCode, makeBook, ok } from '../helpers/tables.js'

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

const names = (answer: any, nameField: number) =>
  answer.tableValues.fields
    .find((field: any) => field.id === nameField)
    .values.map((cell: any) => cell.value)

test.group('tables: reads, formats and filters', () => {
  test('formats columns, rows, diff_ready_rows; paging with offset and maxRows; rowInfos [] past the end', async ({
    assert,
  }) => {
    const { call, catId, f, ids } = await fixture()
    const rows = ok(
      await call('getTableValues', { catId, format: 'rows', maxRows: '2', offset: '1' })
    )
    assert.lengthOf(rows.tableValues.rows, 2)
    assert.equal(rows.tableValues.rows[0].id, ids[1])
    assert.deepEqual(rows.tableValues.rows[0].fields.Name, { value: 'banana split' })
    assert.strictEqual(rows.tableValues.rows[0].fields.Qty.value, 12)
    assert.strictEqual(rows.tableValues.rowInfosLength, 2)
    assert.deepEqual(rows.tableValues.rowInfos[ids[1]], { order: ids[1], index: 1 })
    const diff = ok(await call('getTableValues', { catId, format: 'diff_ready_rows' }))
    assert.strictEqual(diff.tableValues.rows[ids[0]][f.qty], 5)
    const past = ok(await call('getTableValues', { catId, offset: '100' }))
    assert.deepEqual(past.tableValues.rowInfos, [])
    assert.strictEqual(past.tableValues.rowInfosLength, 0)
    const pastRows = ok(await call('getTableValues', { catId, offset: '100', format: 'rows' }))
    assert.deepEqual(pastRows.tableValues.rows, [])
    assert.equal(
      await errorCode(call('getTableValues', { catId, format: 'bogus' })),
      'INVALID_PARAMETER'
    )
    // maxComments 1..10 adds `users` (no comment storage yet: comment cells stay null).
    const withComments = ok(await call('getTableValues', { catId, maxComments: '3' }))
    assert.deepEqual(withComments.tableValues.users, {})
    assert.equal(
      await errorCode(call('getTableValues', { catId, maxComments: '11' })),
      'INVALID_PARAMETER'
    )
  })

  test('filterRowIds: id lists, exclusion, JSON and bracket forms, applyViewFilters by view id, true and dynamic group', async ({
    assert,
  }) => {
    const { call, catId, tabId, f, ids } = await fixture()
    assert.lengthOf(
      names(
        ok(await call('getTableValues', { catId, filterRowIds: `${ids[0]},${ids[2]}` })),
        f.name
      ),
      2
    )
    assert.lengthOf(
      names(
        ok(await call('getTableValues', { catId, filterRowIds: `!${ids[0]},${ids[2]}` })),
        f.name
      ),
      4
    )
    const group = {
      operator: 'and',
      filters: [
        {
          id: 'tmp0',
          field_id: f.name,
          filter_type: 'text',
          json: { predicate: 'contains', operand: 'apple' },
        },
      ],
    }
    for (const form of ALL_FORMS) {
      const bracket = ok(
        await call(
          'getTableValues',
          { catId, filterRowIds: { applyViewFilters: { filterGroup: group } } },
          form
        )
      )
      assert.deepEqual(names(bracket, f.name), ['apple pie', 'apple crumble'], form)
      const json = ok(
        await call(
          'getTableValues',
          { catId, filterRowIds: JSON.stringify({ applyViewFilters: { filterGroup: group } }) },
          form
        )
      )
      assert.deepEqual(names(json, f.name), ['apple pie', 'apple crumble'], form)
    }
    const excluded = ok(
      await call('getTableValues', {
        catId,
        filterRowIds: JSON.stringify({
          row_ids: [ids[0]],
          exclude: true,
          applyViewFilters: { filterGroup: group },
        }),
      })
    )
    assert.deepEqual(names(excluded, f.name), ['apple crumble'])
    const prevails = ok(
      await call('getTableValues', {
        catId,
        filterRowIds: JSON.stringify({
          row_ids: [ids[1]],
          exclude: false,
          applyViewFilters: { filterGroup: group },
        }),
      })
    )
    assert.deepEqual(names(prevails, f.name), ['banana split'])
    const { viewId } = ok(
      await call('createView', {
        catId,
        name: 'Red by qty',
        filterGroup: JSON.stringify({
          operator: 'and',
          filters: [
            { field_id: f.color, filter_type: 'text', json: { predicate: 'is', operand: 'red' } },
            { field_id: f.qty, filter_type: 'sort', json: { predicate: 'desc' } },
          ],
        }),
      })
    )
    assert.deepEqual(
      names(
        ok(
          await call('getTableValues', {
            catId,
            filterRowIds: { applyViewFilters: String(viewId) },
          })
        ),
        f.name
      ),
      ['date cake', 'apple pie']
    )
    // true: the view of the tab last opened
    const { tabId: redTab } = ok(await call('createTab', { catId, view_id: String(viewId) }))
    ok(await call('getTableValues', { catId, tabId: String(redTab), maxRows: '1' }))
    assert.deepEqual(
      names(
        ok(await call('getTableValues', { catId, filterRowIds: { applyViewFilters: 'true' } })),
        f.name
      ),
      ['date cake', 'apple pie']
    )
    void tabId
    const count = ok(
      await call('computeTableOperation', {
        catId,
        operation: 'count',
        filterRowIds: JSON.stringify({ applyViewFilters: viewId }),
      })
    )
    assert.strictEqual(count.result, 2)
    const all = ok(
      await call('getTableValues', { catId, getAllViews: 'true', getDependencies: 'true' })
    )
    assert.notProperty(all.tableValues, 'rowInfos')
    assert.deepEqual(all.tableValues.views.find((view: any) => view.id === viewId).rowIds, [
      ids[4],
      ids[0],
    ])
    assert.deepEqual(all.tableValues.dependencies, [])
  })

  test('predicate catalogue compiles to SQL per field type', async ({ assert }) => {
    const { book, call, catId, f, today } = await fixture()
    const run = async (fieldId: number, predicate: string, operand?: unknown) => {
      const answer = ok(
        await call('getTableValues', {
          catId,
          filterRowIds: JSON.stringify({
            applyViewFilters: {
              filterGroup: {
                operator: 'and',
                filters: [{ field_id: fieldId, filter_type: 'text', json: { predicate, operand } }],
              },
            },
          }),
        })
      )
      return names(answer, f.name)
    }
    assert.deepEqual(await run(f.name, 'is', 'date cake'), ['date cake'])
    assert.lengthOf(await run(f.name, 'is not', 'date cake'), 5)
    assert.deepEqual(await run(f.name, 'contains', '100%'), ['Elderberry 100%'])
    assert.lengthOf(await run(f.name, 'does not contain', 'apple'), 4)
    assert.deepEqual(await run(f.name, 'begins with', 'cherry'), ['cherry tart'])
    assert.deepEqual(await run(f.name, 'ends with', 'split'), ['banana split'])
    assert.deepEqual(await run(f.qty, 'is_empty'), ['apple crumble'])
    assert.lengthOf(await run(f.qty, 'is not empty'), 5)
    assert.deepEqual(await run(f.qty, '=', '7'), ['cherry tart'])
    assert.lengthOf(await run(f.qty, '≠', '7'), 5)
    assert.deepEqual(await run(f.qty, '<', '5'), ['Elderberry 100%'])
    assert.deepEqual(await run(f.qty, '<=', '5'), ['apple pie', 'Elderberry 100%'])
    assert.deepEqual(await run(f.qty, '>', '12'), ['date cake'])
    assert.deepEqual(await run(f.qty, '≥', '12'), ['banana split', 'date cake'])
    assert.deepEqual(await run(f.qty, 'between', [6, 12]), ['banana split', 'cherry tart'])
    assert.deepEqual(await run(f.day, 'before', '2024-01-01'), ['date cake'])
    assert.deepEqual(await run(f.day, 'after', '2024-01-10'), ['banana split', 'cherry tart'])
    assert.deepEqual(await run(f.day, 'on', '2024-01-10'), ['apple pie', 'Elderberry 100%'])
    assert.deepEqual(await run(f.day, 'within', 'today'), ['cherry tart'])
    assert.deepEqual(await run(f.day, 'within', 'last 7 days'), ['cherry tart'])
    assert.deepEqual(await run(f.day, 'within', 'this_week'), ['cherry tart'])
    assert.deepEqual(await run(f.day, 'is', today), ['cherry tart'])
    assert.deepEqual(await run(f.done, 'checked'), ['apple pie', 'cherry tart', 'Elderberry 100%'])
    assert.lengthOf(await run(f.done, 'unchecked'), 3)
    assert.deepEqual(await run(f.color, 'any of', ['red', 'green']), [
      'apple pie',
      'cherry tart',
      'date cake',
    ])
    assert.lengthOf(await run(f.color, 'none of', 'red,green'), 3)
    assert.deepEqual(await run(f.tags, 'any of', ['z']), ['cherry tart', 'date cake'])
    assert.deepEqual(await run(f.tags, 'all of', ['x', 'y']), ['apple pie', 'cherry tart'])
    assert.deepEqual(await run(f.tags, 'none of', ['x']), [
      'banana split',
      'apple crumble',
      'date cake',
    ])
    assert.deepEqual(await run(f.who, 'is me'), ['apple pie', 'cherry tart'])
    assert.deepEqual(await run(f.who, 'is', book.b_o), ['apple pie', 'cherry tart'])
    // nested groups with or
    const nested = ok(
      await call('getTableValues', {
        catId,
        filterRowIds: JSON.stringify({
          applyViewFilters: {
            filterGroup: {
              operator: 'or',
              filters: [
                {
                  field_id: f.name,
                  filter_type: 'text',
                  json: { predicate: 'is', operand: 'date cake' },
                },
                {
                  filter_type: 'group',
                  operator: 'and',
                  filters: [
                    { field_id: f.color, json: { predicate: 'is', operand: 'blue' } },
                    { field_id: f.done, json: { predicate: 'checked' } },
                  ],
                },
              ],
            },
          },
        }),
      })
    )
    assert.deepEqual(names(nested, f.name), ['date cake', 'Elderberry 100%'])
    // group-by then sort
    const grouped = ok(
      await call('getTableValues', {
        catId,
        filterRowIds: JSON.stringify({
          applyViewFilters: {
            filterGroup: {
              operator: 'and',
              filters: [
                { field_id: f.color, filter_type: 'groupby', json: { predicate: 'asc' } },
                { field_id: f.qty, filter_type: 'sort', json: { predicate: 'desc' } },
              ],
            },
          },
        }),
      })
    )
    assert.deepEqual(names(grouped, f.name), [
      'apple crumble',
      'banana split',
      'Elderberry 100%',
      'cherry tart',
      'date cake',
      'apple pie',
    ])
    // errors: unknown predicate, another table's field
    const bad = await call('getTableValues', {
      catId,
      filterRowIds: JSON.stringify({
        applyViewFilters: {
          filterGroup: {
            operator: 'and',
            filters: [{ field_id: f.qty, json: { predicate: 'sounds like', operand: 'x' } }],
          },
        },
      }),
    })
    assert.equal(bad.errorCode, 'INVALID_PARAMETER')
    const other = await call('getTableValues', {
      catId,
      filterRowIds: JSON.stringify({
        applyViewFilters: {
          filterGroup: {
            operator: 'and',
            filters: [{ field_id: 999999, json: { predicate: 'is', operand: 'x' } }],
          },
        },
      }),
    })
    assert.equal(other.errorCode, 'INVALID_PARAMETER')
  })

  test('getNamedTableValues, getTableValueSubset, getTableRows, listTableRowsById, b_o inferred', async ({
    assert,
  }) => {
    const { book, call, catId, f, ids } = await fixture()
    const named = ok(
      await call('getNamedTableValues', {
        b_o: book.b_o,
        b_c: book.b_c,
        catCode: 'items',
        fieldCodes: 'name,qty',
      })
    )
    assert.deepEqual(
      named.tableValues.fields.map((field: any) => field.id),
      [f.name, f.qty]
    )
    const subset = ok(
      await call('getTableValueSubset', {
        catId,
        fieldIds: `${f.qty},${f.name}`,
        rowIds: `${ids[1]},${ids[0]}`,
      })
    )
    assert.deepEqual(subset.tableValues, [
      [12, 'banana split'],
      [5, 'apple pie'],
    ])
    assert.equal(subset.catId, catId)
    const legacy = ok(
      await call('getTableRows', { catId, pageSize: '2', page: '2', getTableInfo: 'true' })
    )
    assert.lengthOf(legacy.rows, 2)
    assert.equal(legacy.rows[0].id, ids[2])
    assert.isArray(legacy.table.categories[0].views[0].rowIds)
    const listed = ok(await call('listTableRowsById', { catId, maxRows: '3' }))
    assert.strictEqual(listed.tableValues.rowInfosLength, 3)
    const wrongOwner = await call('getTableValues', { catId, b_o: 'someone-else' })
    assert.equal(wrongOwner.errorCode, 'NOT_FOUND')
    ok(
      await call('updateTableValue', { rowId: String(ids[0]), fieldId: String(f.qty), value: '6' })
    )
  })

  test('structure changes: updateField converts data, deleteField, views and tabs, deleteTable', async ({
    assert,
  }) => {
    const { book, call, catId, f, ids } = await fixture()
    ok(await call('updateField', { fieldId: f.qty, type: 'shorttext', name: 'Quantity' }))
    let subset = ok(
      await call('getTableValueSubset', {
        catId,
        fieldIds: String(f.qty),
        rowIds: `${ids[0]},${ids[3]}`,
      })
    )
    assert.deepEqual(subset.tableValues, [['5'], [null]])
    ok(await call('updateField', { fieldId: f.qty, type: 'double' }))
    subset = ok(
      await call('getTableValueSubset', { catId, fieldIds: String(f.qty), rowIds: String(ids[1]) })
    )
    assert.deepEqual(subset.tableValues, [[12]])
    ok(
      await call('updateField', {
        fieldId: f.color,
        type: 'enum',
        options: JSON.stringify({ multiple: true }),
      })
    )
    subset = ok(
      await call('getTableValueSubset', {
        catId,
        fieldIds: String(f.color),
        rowIds: String(ids[0]),
      })
    )
    assert.deepEqual(subset.tableValues, [[['red']]])
    ok(await call('deleteField', { fieldId: f.done }))
    const { viewId } = ok(await call('createView', { catId, name: 'V' }))
    ok(
      await call('updateView', {
        viewId,
        name: 'V2',
        presentation: 'card',
        filterGroup: {
          operator: 'and',
          filters: {
            0: {
              field_id: String(f.name),
              filter_type: 'text',
              json: { predicate: 'contains', operand: 'a' },
            },
          },
        },
      })
    )
    const tables = ok(
      await call('getBookTables', { b_o: book.b_o, b_c: book.b_c, includeFields: '1' })
    )
    const category = tables.bookTables.categories[0]
    const view = category.views.find((candidate: any) => candidate.id === viewId)
    assert.equal(view.name, 'V2')
    assert.equal(view.filterGroup.filters[0].json.predicate, 'contains')
    assert.notInclude(
      category.fields.map((field: any) => field.id),
      f.done
    )
    assert.equal(category.fields.find((field: any) => field.id === f.qty).name, 'Quantity')
    assert.equal(
      await errorCode(
        call('updateView', {
          viewId,
          filterGroup: JSON.stringify({
            operator: 'and',
            filters: [{ field_id: f.name, json: { predicate: 'nope' } }],
          }),
        })
      ),
      'INVALID_PARAMETER'
    )
    const { tabId } = ok(await call('createTab', { catId, view_id: String(viewId) }))
    ok(await call('updateTab', { tabId, hidden: 'true' }))
    ok(await call('deleteTab', { tabId }))
    ok(await call('deleteView', { viewId }))
    ok(await call('deleteTable', { catId }))
    assert.equal(await errorCode(call('getTableValues', { catId })), 'NOT_FOUND')
  })
})
