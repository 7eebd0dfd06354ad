import { test } from '@japa/runner'
import { TABLE_LIMITS } from '#plugins/tables/lib/limits'
import { serverUrl } from '#tests/helpers/server'
import { caller, makeBook, ok } from '../helpers/tables.js'

/** A book with one table, and a caller for its owner. */
async function fixture() {
  const book = await makeBook()
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const table = ok(await call('createTable', { ...base, name: 'Limits' }))
  return { book, call, base, catId: table.catId as number, viewId: table.viewId as number }
}

const longer = (limit: number) => 'x'.repeat(limit + 1)

test.group('tables: every stored text and count has a limit', () => {
  test('names, codes and descriptions over their limit get a nok naming the parameter', async ({
    assert,
  }) => {
    const { call, base, catId, viewId, book } = await fixture()
    const field = ok(
      await call('createField', { b_o: book.b_o, catId, name: 'F', type: 'shorttext' })
    )
    const cases: [string, Record<string, unknown>, string][] = [
      ['createTable', { ...base, name: longer(TABLE_LIMITS.nameLength) }, 'name'],
      [
        'createTable',
        { ...base, name: 'T', description: longer(TABLE_LIMITS.descriptionLength) },
        'description',
      ],
      ['updateTable', { b_o: book.b_o, catId, code: longer(TABLE_LIMITS.codeLength) }, 'code'],
      [
        'createField',
        { b_o: book.b_o, catId, name: longer(TABLE_LIMITS.nameLength), type: 'shorttext' },
        'name',
      ],
      [
        'updateField',
        {
          b_o: book.b_o,
          fieldId: field.fieldId,
          description: longer(TABLE_LIMITS.descriptionLength),
        },
        'description',
      ],
      [
        'createView',
        { b_o: book.b_o, catId, name: 'V', description: longer(TABLE_LIMITS.descriptionLength) },
        'description',
      ],
      ['updateView', { b_o: book.b_o, viewId, name: longer(TABLE_LIMITS.nameLength) }, 'name'],
    ]
    for (const [req, params, parameter] of cases) {
      const answer = await call(req, params, 'json')
      assert.equal(answer.status, 'nok', req)
      assert.equal(answer.errorCode, 'INVALID_PARAMETER', req)
      assert.equal(answer.field, parameter, req)
    }
    // Exactly at the limit is accepted.
    ok(
      await call(
        'updateView',
        { b_o: book.b_o, viewId, description: 'd'.repeat(TABLE_LIMITS.descriptionLength) },
        'json'
      )
    )
  })

  test('settings over their byte limit are refused and nothing is stored', async ({ assert }) => {
    const { call, book, catId, viewId } = await fixture()
    const big = { layout: 'y'.repeat(TABLE_LIMITS.settingBytes) }
    const card = await call(
      'updateView',
      { b_o: book.b_o, viewId, card: JSON.stringify(big) },
      'json'
    )
    assert.equal(card.errorCode, 'INVALID_PARAMETER')
    assert.equal(card.field, 'card')
    const values = Array.from({ length: 2_000 }, (_, index) => `value ${index} ${'z'.repeat(10)}`)
    const options = await call(
      'createField',
      {
        b_o: book.b_o,
        catId,
        name: 'Big enum',
        type: 'enum',
        options: JSON.stringify({ values }),
      },
      'json'
    )
    assert.equal(options.errorCode, 'INVALID_PARAMETER')
    assert.equal(options.field, 'options')
    const tables = ok(
      await call('getBookTables', { b_o: book.b_o, b_c: book.b_c, includeFields: 1 })
    )
    const category = tables.bookTables.categories[0]
    assert.notInclude(JSON.stringify(category), 'yyyyyyyy')
    assert.isFalse((category.fields ?? []).some((f: { name: string }) => f.name === 'Big enum'))
  })

  test('a long text cell over its limit is refused', async ({ assert }) => {
    const { call, book, catId } = await fixture()
    const notes = ok(
      await call('createField', { b_o: book.b_o, catId, name: 'Notes', type: 'mediumtext' })
    )
    const atLimit = 'n'.repeat(TABLE_LIMITS.longTextLength)
    ok(
      await call(
        'updateTableValue',
        { b_o: book.b_o, rowId: 'tmp1', fieldId: notes.fieldId, value: atLimit },
        'json'
      )
    )
    const over = await call(
      'updateTableValue',
      { b_o: book.b_o, rowId: 'tmp2', fieldId: notes.fieldId, value: atLimit + 'n' },
      'json'
    )
    assert.equal(over.status, 'nok')
    assert.equal(over.errorCode, 'INVALID_PARAMETER')
  })

  test('tabs per table are bounded, and getBookTables serializes a table once however many tabs show it', async ({
    assert,
  }) => {
    const { call, book, catId } = await fixture()
    // createTable made one tab already.
    for (let tab = 1; tab < TABLE_LIMITS.tabsPerTable; tab++)
      ok(await call('createTab', { b_o: book.b_o, catId }))
    const refused = await call('createTab', { b_o: book.b_o, catId })
    assert.equal(refused.errorCode, 'CONFLICT')
    assert.include(refused.errorMsg, String(TABLE_LIMITS.tabsPerTable))
    const tables = ok(await call('getBookTables', { b_o: book.b_o, b_c: book.b_c }))
    assert.lengthOf(tables.bookTables.tabs, TABLE_LIMITS.tabsPerTable)
    assert.lengthOf(tables.bookTables.categories, TABLE_LIMITS.tabsPerTable)
    for (const [index, tab] of tables.bookTables.tabs.entries())
      assert.equal(tables.bookTables.categories[index].id, tab.category_id)
  })

  test('views per table and filters per view are bounded', async ({ assert }) => {
    const { call, book, catId } = await fixture()
    const field = ok(
      await call('createField', { b_o: book.b_o, catId, name: 'F', type: 'shorttext' })
    )
    const filter = (index: number) => ({
      id: `f${index}`,
      field_id: field.fieldId,
      filter_type: 'text',
      json: { predicate: 'contains', operand: `v${index}` },
    })
    const tooMany = {
      operator: 'and',
      filters: Array.from({ length: TABLE_LIMITS.filtersPerView + 1 }, (_, i) => filter(i)),
    }
    const refused = await call(
      'createView',
      { b_o: book.b_o, catId, name: 'Many', filterGroup: JSON.stringify(tooMany) },
      'json'
    )
    assert.equal(refused.errorCode, 'INVALID_PARAMETER')
    assert.equal(refused.field, 'filterGroup')
    // createTable made one view already.
    for (let view = 1; view < TABLE_LIMITS.viewsPerTable; view++)
      ok(await call('createView', { b_o: book.b_o, catId, name: `V${view}` }))
    const full = await call('createView', { b_o: book.b_o, catId, name: 'One more' })
    assert.equal(full.errorCode, 'CONFLICT')
  })

  test('a filter group or JSON body nested 100,000 levels deep is a nok, not a crash', async ({
    assert,
  }) => {
    const { call, book, catId } = await fixture()
    const deepText = '['.repeat(100_000) + ']'.repeat(100_000)
    const deepGroup = '{"filters":'.repeat(50_000) + '[]' + '}'.repeat(50_000)
    for (const filterGroup of [deepText, deepGroup]) {
      const answer = await call(
        'createView',
        { b_o: book.b_o, catId, name: 'Deep', filterGroup },
        'urlencoded'
      )
      assert.equal(answer.status, 'nok')
      assert.equal(answer.errorCode, 'INVALID_PARAMETER')
    }
    const rows = await call(
      'createOrUpdateTableRows',
      { b_o: book.b_o, rows: deepText },
      'urlencoded'
    )
    assert.equal(rows.errorCode, 'INVALID_PARAMETER')
    // JSON.stringify would overflow the test's own stack: the body is written as text.
    const deepBody = `{"req":"getBookTables","deep":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`
    const response = await fetch(`${serverUrl()}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: deepBody,
    })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'application/json')
    const json = (await response.json()) as Record<string, string>
    assert.equal(json.errorCode, 'INVALID_PARAMETER')
    assert.include(json.errorMsg, 'deeper')
  })
})
