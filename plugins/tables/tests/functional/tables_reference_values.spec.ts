import { test } from '@japa/runner'
import { login } from '#tests/helpers/users'
import { REFERENCE_TOTAL_CAP } from '#plugins/tables/services/reference_values_service'
import { indexedColumns } from '#plugins/tables/services/text_index'
import { addField, addRows, caller, errorCode, makeBook, ok } from '../helpers/tables.js'

/** Companies (name, country) and Deals with a link to Companies; a reader member. */
async function fixture() {
  const book = await makeBook([{ right: 1 }])
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const companies = ok(await call('createTable', { ...base, name: 'Companies' })).catId as number
  const name = await addField(call, companies, 'Name', 'shorttext')
  const country = await addField(call, companies, 'Country', 'enum', { values: ['FR', 'DE'] })
  const data = [
    ['Acme 100%', 'FR'],
    ['Beta', 'DE'],
    ['acme_two', 'FR'],
    ['Gamma', 'DE'],
    ['Acme1000', 'FR'],
  ]
  const ids = await addRows(
    call,
    data.map(([n, c]) => ({ [name]: n, [country]: c }))
  )
  const { viewId: french } = ok(
    await call('createView', {
      catId: companies,
      name: 'French',
      filterGroup: JSON.stringify({
        operator: 'and',
        filters: [
          { field_id: country, filter_type: 'enum', json: { predicate: 'is', operand: 'FR' } },
        ],
      }),
    })
  )
  const deals = ok(await call('createTable', { ...base, name: 'Deals' })).catId as number
  const title = await addField(call, deals, 'Title', 'shorttext')
  const link = await addField(call, deals, 'Company', 'link', { linkCatId: companies })
  return { book, call, companies, deals, name, country, ids, french, title, link }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

const referenceOf = async (fx: Fixture, params: Record<string, unknown>, call = fx.call) =>
  ok(await call('getReferenceFieldValues', { b_o: fx.book.b_o, fieldId: fx.link, ...params }))

const texts = (answer: Record<string, any>) => answer.values.map((value: any) => value.text)

test.group('tables: getReferenceFieldValues', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('lists the rows a link may point to, with their text, paged', async ({ assert }) => {
    const all = await referenceOf(fx, {})
    assert.equal(all.catId, fx.companies)
    assert.equal(all.total, 5)
    assert.deepEqual(
      all.values,
      ['Acme 100%', 'Beta', 'acme_two', 'Gamma', 'Acme1000'].map((text, i) => ({
        id: fx.ids[i],
        text,
      }))
    )
    const page = await referenceOf(fx, { offset: 1, maxRows: 2 })
    assert.deepEqual(texts(page), ['Beta', 'acme_two'])
    assert.equal(page.total, 5)
  })

  test('search_string finds text in any case, its wildcards taken literally', async ({
    assert,
  }) => {
    const acme = await referenceOf(fx, { search_string: 'ACME' })
    assert.deepEqual(texts(acme), ['Acme 100%', 'acme_two', 'Acme1000'])
    assert.equal(acme.total, 3)
    assert.deepEqual(texts(await referenceOf(fx, { search_string: '100%' })), ['Acme 100%'])
    assert.deepEqual(texts(await referenceOf(fx, { search_string: 'e_t' })), ['acme_two'])
    const none = await referenceOf(fx, { search_string: 'zzz' })
    assert.deepEqual(none, { ...none, values: [], total: 0 })
  })

  test("honours the link field's view restriction and a viewId", async ({ assert }) => {
    const restricted = ok(
      await fx.call('createField', {
        catId: fx.deals,
        name: 'French company',
        type: 'link',
        options: JSON.stringify({ linkCatId: fx.companies, linkViewId: fx.french }),
      })
    ).fieldId as number
    const answer = await referenceOf(fx, { fieldId: restricted })
    assert.deepEqual(texts(answer), ['Acme 100%', 'acme_two', 'Acme1000'])
    assert.equal(answer.total, 3)
    const both = await referenceOf(fx, { fieldId: restricted, search_string: 'two' })
    assert.deepEqual(texts(both), ['acme_two'])
    assert.deepEqual(texts(await referenceOf(fx, { viewId: fx.french, maxRows: 1 })), ['Acme 100%'])
    assert.equal(
      await errorCode(
        fx.call('updateField', {
          fieldId: restricted,
          options: JSON.stringify({ linkViewId: 999999 }),
        })
      ),
      'INVALID_PARAMETER'
    )
  })

  test('bad parameters answer documented codes', async ({ assert }) => {
    const code = (params: Record<string, unknown>) =>
      errorCode(fx.call('getReferenceFieldValues', { fieldId: fx.link, ...params }))
    assert.equal(await errorCode(fx.call('getReferenceFieldValues', {})), 'MISSING_PARAMETER')
    assert.equal(await code({ fieldId: 'x' }), 'INVALID_PARAMETER')
    assert.equal(await code({ fieldId: 999999999 }), 'NOT_FOUND')
    assert.equal(await code({ fieldId: fx.title }), 'INVALID_PARAMETER')
    assert.equal(await code({ fromFieldId: fx.title }), 'INVALID_PARAMETER')
    assert.equal(await code({ viewId: 999999 }), 'INVALID_PARAMETER')
    assert.equal(await code({ maxRows: -1 }), 'INVALID_PARAMETER')
  })

  test('a stranger, a restricted session, and a member who may not read the linked table get nothing', async ({
    assert,
  }) => {
    const other = await makeBook()
    const stranger = caller(other.session)
    assert.equal(
      await errorCode(stranger('getReferenceFieldValues', { fieldId: fx.link })),
      'NOT_FOUND'
    )
    const hidden = caller(await login(fx.book.owner, { restrictions: 'hideTables' }))
    assert.equal(
      await errorCode(hidden('getReferenceFieldValues', { fieldId: fx.link })),
      'RESTRICTED_SESSION'
    )
    assert.equal(
      await errorCode(caller(null)('getReferenceFieldValues', { fieldId: fx.link })),
      'MISSING_PARAMETER'
    )
    const reader = caller(fx.book.members[0].session)
    ok(await reader('getReferenceFieldValues', { fieldId: fx.link }))
    ok(await fx.call('updateTable', { catId: fx.companies, rights: JSON.stringify({ select: 3 }) }))
    const refused = await reader('getReferenceFieldValues', { fieldId: fx.link })
    assert.equal(refused.errorCode, 'NOT_FOUND')
    assert.notInclude(JSON.stringify(refused), 'Acme')
    ok(await fx.call('updateTable', { catId: fx.companies, rights: JSON.stringify({ select: 1 }) }))
  })
})

/**
 * `total` counts at most REFERENCE_TOTAL_CAP matches, or up to the page's end when it is
 * further; beyond, it answers the cap and `totalCapped: true`. The page itself stays exact. On
 * SQLite the count of a search reads the naming field's text index (a superset the LIKE
 * narrows); each answer is checked against the rows written.
 */
test.group('tables: getReferenceFieldValues total past the cap', (group) => {
  const COMMON = REFERENCE_TOTAL_CAP + 50
  const RARE = 40
  let fx: { call: ReturnType<typeof caller>; b_o: string; link: number; target: number }
  let ids: number[]
  let names: string[]
  group.setup(async () => {
    const book = await makeBook()
    const call = caller(book.session)
    const base = { b_o: book.b_o, b_c: book.b_c }
    const target = ok(await call('createTable', { ...base, name: 'People' })).catId as number
    const name = await addField(call, target, 'Name', 'shorttext')
    // Common rows, a few rare ones among them, and names the text index folds but LIKE may not.
    names = Array.from({ length: COMMON }, (_, i) =>
      i % 26 === 5 && i / 26 < RARE ? `common rarity ${i}` : `common ${i}`
    )
    names.push('École one', 'école two', 'ÉCOLE three', 'Ecole four', 'ecole five')
    names.push('quote "ab" here', 'quote "ab', 'per 100%_! cent', 'NEAR(x y)', 'star *** x')
    ids = await addRows(
      call,
      names.map((text) => ({ [name]: text }))
    )
    const deals = ok(await call('createTable', { ...base, name: 'Deals' })).catId as number
    const link = await addField(call, deals, 'Person', 'link', { linkCatId: target })
    fx = { call, b_o: book.b_o, link, target }
  })

  const reference = async (params: Record<string, unknown>) =>
    ok(
      await fx.call('getReferenceFieldValues', {
        b_o: fx.b_o,
        fieldId: fx.link,
        maxRows: 1000,
        ...params,
      })
    )
  const idsOf = (answer: Record<string, any>) => answer.values.map((value: any) => value.id)

  test('without a search, more rows than the cap answer the cap and totalCapped', async ({
    assert,
  }) => {
    const first = await reference({ maxRows: 100 })
    assert.deepEqual(idsOf(first), ids.slice(0, 100))
    assert.equal(first.total, REFERENCE_TOTAL_CAP)
    assert.isTrue(first.totalCapped)
    // A page past the cap: it is read whole, and the count goes as far as its end.
    const late = await reference({ offset: COMMON, maxRows: 100 })
    assert.deepEqual(idsOf(late), ids.slice(COMMON))
    assert.equal(late.total, ids.length)
    assert.isFalse(late.totalCapped)
  })

  test('a common search is capped, its pages exact', async ({ assert }) => {
    const common = names.flatMap((text, i) => (text.startsWith('common') ? [ids[i]] : []))
    assert.lengthOf(common, COMMON)
    const indexed = await indexedColumns(fx.target)
    assert.isAbove(indexed.size, 0)
    const first = await reference({ search_string: 'COMMON' })
    assert.deepEqual(idsOf(first), common.slice(0, 1000))
    assert.equal(first.total, REFERENCE_TOTAL_CAP)
    assert.isTrue(first.totalCapped)
    const last = await reference({ search_string: 'common', offset: 1000, maxRows: 100 })
    assert.deepEqual(idsOf(last), common.slice(1000))
    assert.equal(last.total, COMMON)
    assert.isFalse(last.totalCapped)
  })

  test('a selective search counts exactly, as many as its rows', async ({ assert }) => {
    const rare = names.flatMap((text, i) => (text.includes('rarity') ? [ids[i]] : []))
    assert.lengthOf(rare, RARE)
    const answer = await reference({ search_string: 'Rarity' })
    assert.deepEqual(idsOf(answer), rare)
    assert.equal(answer.total, RARE)
    assert.isFalse(answer.totalCapped)
    const page = await reference({ search_string: 'rarity', offset: 30, maxRows: 5 })
    assert.deepEqual(idsOf(page), rare.slice(30, 35))
    assert.equal(page.total, RARE)
    // Past the end: no rows, the total still counted.
    const beyond = await reference({ search_string: 'rarity', offset: 100, maxRows: 5 })
    assert.deepEqual([beyond.values, beyond.total, beyond.totalCapped], [[], RARE, false])
    for (const search of ['école', 'ÉCOLE', 'cole', 'ecole', 'rarity 5', 'zzz', '%', 'ar']) {
      const found = await reference({ search_string: search })
      assert.equal(found.total, found.values.length, search)
      assert.isFalse(found.totalCapped, search)
    }
    // A page of one row makes the count run (through the text index on SQLite): it agrees with
    // the rows of the whole list, whatever FTS5 or LIKE would make of the pattern.
    for (const search of ['ÉCOLE', 'école', 'cole', '"ab', 'ab"', '%_!', 'NEAR(', '***', 'x y)']) {
      const whole = await reference({ search_string: search })
      const paged = await reference({ search_string: search, maxRows: 1 })
      assert.isAbove(whole.values.length, 0, search)
      assert.deepEqual(idsOf(paged), idsOf(whole).slice(0, 1), search)
      assert.equal(paged.total, whole.values.length, search)
      assert.isFalse(paged.totalCapped, search)
    }
    const none = await reference({ search_string: 'nowhere' })
    assert.deepEqual([none.values, none.total, none.totalCapped], [[], 0, false])
  })
})
