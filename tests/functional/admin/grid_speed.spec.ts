import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { makeUser } from '#tests/helpers/users'
import { pageOf, signedInAdmin, type ConsoleClient } from '#tests/functional/admin/console_client'
import { addField, addRows, caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { GridSearch } from '#plugins/tables/admin/grid_search'
import { searchedFields } from '#plugins/tables/admin/grid_query'
import { MetaService } from '#plugins/tables/services/meta_service'

/**
 * The console grid's search and sort on big tables (issue 22 item 9, GridSearch): the search
 * narrowed by indexes shows the rows getTableValues' `contains` on every searched column shows,
 * and a sort of a big table builds its column's index once, reported in the grid.
 */

/** Companies (Name, Size) and Contacts linking to them, with text, choices, people, a lookup. */
async function searchFixture() {
  const book = await makeBook()
  const owner = caller(book.session)
  const person = await makeUser()
  const companies = ok(
    await owner('createTable', {
      b_o: book.b_o,
      b_c: book.b_c,
      name: 'Companies',
      fields: JSON.stringify([
        { name: 'Name', type: 'shorttext' },
        { name: 'Size', type: 'integer' },
      ]),
    })
  ).catId as number
  const meta = await app.container.make(MetaService)
  const companiesMeta = await meta.category(companies)
  const companyFields = companiesMeta!.category.fields
  const companyIds = await addRows(owner, [
    { [companyFields[0].id]: 'Acme Works', [companyFields[1].id]: 120 },
    { [companyFields[0].id]: 'Blue River', [companyFields[1].id]: 4512 },
    { [companyFields[0].id]: 'Ünïcode GmbH', [companyFields[1].id]: 7 },
  ])
  const catId = ok(await owner('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Contacts' }))
    .catId as number
  const f = {
    name: await addField(owner, catId, 'Name', 'shorttext'),
    notes: await addField(owner, catId, 'Notes', 'mediumtext'),
    status: await addField(owner, catId, 'Status', 'enum', {
      values: ['open', 'closed', 'reopened'],
    }),
    tags: await addField(owner, catId, 'Tags', 'enum', {
      values: ['vip', 'press', 'acme fan'],
      multiple: true,
    }),
    company: await addField(owner, catId, 'Company', 'link', { linkCatId: companies }),
    owner: await addField(owner, catId, 'Owner', 'user'),
    price: await addField(owner, catId, 'Price', 'double'),
  }
  const size = await addField(owner, catId, 'Company size', 'lookup', {
    linkFieldId: f.company,
    targetFieldId: companyFields[1].id,
  })
  const rows = [
    { name: 'Ann ACME', notes: 'met at the fair', status: 'open', tags: ['vip'], company: 0 },
    { name: 'Bob', notes: 'works for acme, the big one', status: 'closed', tags: [], company: 1 },
    { name: 'Cid', notes: '', status: 'reopened', tags: ['acme fan'], company: null },
    { name: 'Dee', notes: 'ünïcode notes', status: '', tags: ['press'], company: 2 },
    { name: 'Eve', notes: 'nothing here', status: 'open', tags: [], company: 0, owner: true },
    { name: 'Fay 4512', notes: 'price list', status: 'closed', tags: ['vip', 'press'] },
  ]
  await addRows(
    owner,
    rows.map((row, n) => ({
      [f.name]: row.name,
      [f.notes]: row.notes,
      [f.status]: row.status,
      [f.tags]: JSON.stringify(row.tags),
      [f.company]:
        row.company === null || row.company === undefined ? '' : String(companyIds[row.company]),
      [f.owner]: row.owner ? person.code : '',
      [f.price]: n * 10.5,
    })),
    { b_o: book.b_o }
  )
  return { book, owner, catId, f, size, person }
}

/** The ids of the rows the grid shows for a search (every page of 200). */
async function gridIds(client: ConsoleClient, catId: number, search: string) {
  const page = await pageOf(
    client,
    `/admin/tables/${catId}?perPage=200&search=${encodeURIComponent(search)}`
  )
  const rows = page.props.rows as { items: { id: number }[]; total: number; error: string | null }
  return { ids: rows.items.map((row) => row.id).sort(), total: rows.total, error: rows.error }
}

test.group('console grid: search by indexes', () => {
  test('shows the rows a contains on every searched column selects, found through indexes', async ({
    assert,
  }) => {
    const fx = await searchFixture()
    const { client } = await signedInAdmin()
    const meta = await app.container.make(MetaService)
    const found = await meta.category(fx.catId)
    const category = found!.category
    const fields = searchedFields(category)
    assert.includeMembers(
      fields.map((field) => field.name),
      ['Name', 'Notes', 'Status', 'Tags', 'Company', 'Owner', 'Company size']
    )
    const search = await app.container.make(GridSearch)
    const searches = [
      'acme', // text in any case, a link's name, a multiple choice
      'ACM',
      'open', // a choice (two options hold it)
      'ünïcode', // the text index folds Unicode case, LIKE does not: LIKE decides
      'ÜNÏCODE',
      '4512', // a lookup's number and a name
      fx.person.code.slice(2, 8), // a person's code
      'zzz', // nothing
      'me, the', // a comma: the scan answers
      'ac', // too short for the index: the scan answers
      'works for acme',
      // Characters FTS5 and LIKE give a meaning to: taken as themselves.
      'ac"me',
      '"acme"',
      '50%',
      'x_y',
      'NEAR(acme fair)',
      'acm*',
      "o'clock",
    ]
    for (const text of searches) {
      const expected = ok(
        await fx.owner('getTableValues', {
          catId: fx.catId,
          format: 'diff_ready_rows',
          maxRows: 1000,
          filterRowIds: JSON.stringify({
            applyViewFilters: {
              filterGroup: {
                operator: 'or',
                filters: fields.map((field) => ({
                  field_id: field.id,
                  filter_type: 'text',
                  json: { predicate: 'contains', operand: text },
                })),
              },
            },
          }),
        })
      ).tableValues.rows
      const expectedIds = (Array.isArray(expected) ? [] : Object.keys(expected).map(Number)).sort()
      const shown = await gridIds(client, fx.catId, text)
      assert.isNull(shown.error, text)
      assert.deepEqual(shown.ids, expectedIds, `search "${text}"`)
      assert.equal(shown.total, expectedIds.length, `count of "${text}"`)
      const narrowed = await search.candidates(category, fields, text)
      if (/[,"]/.test(text) || text.length < 3) assert.isNull(narrowed, `"${text}" scans`)
      else assert.isNotNull(narrowed, `"${text}" is narrowed by indexes`)
    }
    // The fixture makes sure the comparisons are not all empty.
    const acme = await gridIds(client, fx.catId, 'acme')
    const open = await gridIds(client, fx.catId, 'open')
    assert.lengthOf(acme.ids, 4)
    assert.lengthOf(open.ids, 3)
  })
})

test.group('console grid: a search that scans counts up to a cap', (group) => {
  const cap = GridSearch.countCap
  group.each.teardown(() => {
    GridSearch.countCap = cap
  })

  test('past the cap the grid says "more than", shows the same first rows and pages within the cap', async ({
    assert,
  }) => {
    const fx = await searchFixture()
    const { client } = await signedInAdmin()
    // "e": too short for the indexes, the search scans; it is in every row's name or notes.
    const full = await pageOf(client, `/admin/tables/${fx.catId}?search=e`)
    assert.isFalse(full.props.rows.more)
    assert.equal(full.props.rows.total, 6)
    GridSearch.countCap = 4
    const capped = await pageOf(client, `/admin/tables/${fx.catId}?search=e`)
    assert.isTrue(capped.props.rows.more)
    assert.equal(capped.props.rows.total, 4)
    const ids = (page: typeof full) => page.props.rows.items.map((row: { id: number }) => row.id)
    assert.deepEqual(ids(capped), ids(full), 'the page shows the same rows')
    GridSearch.countCap = 6
    const exact = await pageOf(client, `/admin/tables/${fx.catId}?search=e`)
    assert.isFalse(exact.props.rows.more, 'as many rows as the cap: not more')
    assert.equal(exact.props.rows.total, 6)
    // A search the indexes narrow (SQLite) is counted exactly, whatever the cap.
    GridSearch.countCap = 1
    const narrowed = await pageOf(client, `/admin/tables/${fx.catId}?search=acme`)
    assert.equal(narrowed.props.rows.more, false)
    assert.equal(narrowed.props.rows.total, 4)
  })
})

test.group('console grid: sort of a big table', (group) => {
  const minRows = GridSearch.indexMinRows
  group.each.teardown(() => {
    GridSearch.indexMinRows = minRows
  })

  test('builds the sorted column index once, says so, and shows the same order', async ({
    assert,
  }) => {
    const fx = await searchFixture()
    const { client } = await signedInAdmin()
    const url = `/admin/tables/${fx.catId}?sort=${fx.f.price}&dir=desc`
    const before = await pageOf(client, url)
    assert.deepEqual(before.props.rows.built, [], 'a small table is sorted without an index')
    GridSearch.indexMinRows = 3
    const first = await pageOf(client, url)
    assert.lengthOf(first.props.rows.built, 1)
    assert.equal(first.props.rows.built[0].field, 'Price')
    const again = await pageOf(client, url)
    assert.deepEqual(again.props.rows.built, [], 'built once')
    const order = (page: typeof first) =>
      page.props.rows.items.map((row: { id: number }) => row.id) as number[]
    assert.deepEqual(order(first), order(before))
    assert.deepEqual(order(again), order(before))
    assert.lengthOf(order(before), 6)
    const numbers = before.props.rows.items.map((row: { number: number }) => row.number)
    assert.deepEqual(numbers, [6, 5, 4, 3, 2, 1], 'descending price (it grows with the row)')
  })
})
