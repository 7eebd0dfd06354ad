import { test } from '@japa/runner'
import { login } from '#tests/helpers/users'
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
