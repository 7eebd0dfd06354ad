import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import app from '@adonisjs/core/services/app'
import { RowsService } from '#plugins/tables/services/rows_service'
import { MetaService } from '#plugins/tables/services/meta_service'
import { ALL_FORMS } from '#tests/helpers/rpc'
import {
  caller,
  errorCode,
  eventually,
  makeBook,
  ok,
  ownerActor,
  rowsChangedEvents,
  rowsOf,
  statusOf,
} from '../helpers/tables.js'

/** A book with a "Contacts" table (a few typed fields) and a "Companies" table linked from it. */
async function fixture() {
  const book = await makeBook([{ right: 1 }, { right: 2 }])
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const companies = ok(
    await call('createTable', {
      ...base,
      name: 'Companies',
      code: 'companies',
      fields: JSON.stringify([
        { name: 'Name', type: 'shorttext' },
        { name: 'Size', type: 'integer' },
      ]),
    })
  )
  const contacts = ok(await call('createTable', { ...base, name: 'Contacts', code: 'contacts' }))
  const catId = contacts.catId
  const field = async (name: string, type: string, options: Record<string, unknown> = {}) =>
    ok(
      await call('createField', {
        b_o: book.b_o,
        catId,
        name,
        type,
        options: JSON.stringify(options),
      })
    ).fieldId as number
  const f = {
    name: await field('Name', 'shorttext'),
    notes: await field('Notes', 'mediumtext'),
    price: await field('Price', 'double', { numformat: '0.00' }),
    qty: await field('Qty', 'integer'),
    born: await field('Born', 'date', { dateFormat: 'd/m/Y' }),
    active: await field('Active', 'checkbox'),
    status: await field('Status', 'enum', {
      values: ['new', 'won', 'lost'],
      enumColors: {
        values: [
          { value: 'new', color: '#00f' },
          { value: 'won', color: '#0f0' },
          { value: 'lost', color: '#f00' },
        ],
        strict: true,
        displayColors: true,
      },
    }),
    tags: await field('Tags', 'enum', { values: ['a', 'b', 'c'], multiple: true }),
    company: await field('Company', 'link', { linkCatId: companies.catId, multiple: true }),
    email: await field('Email', 'email'),
    owner: await field('Owner', 'user'),
    total: await field('Total', 'formula', { formula: '{Price} * {Qty}' }),
    files: await field('Files', 'files'),
  }
  const containers = await call('getBookTables', { ...base, includeFields: 'true' })
  const compFields = containers.bookTables.categories.find(
    (c: any) => c.id === companies.catId
  ).fields
  const compName = compFields[0].id
  const compSize = compFields[1].id
  ;(f as any).companySize = await field('Company size', 'lookup', {
    linkFieldId: f.company,
    targetFieldId: compSize,
  })
  ;(f as any).companyCount = await field('Company count', 'rollup', {
    linkFieldId: f.company,
    rollup: 'count',
  })
  const acme = ok(
    await call('createOrUpdateTableRows', {
      b_o: book.b_o,
      rows: JSON.stringify({
        tmp1: { [compName]: 'Acme', [compSize]: '50' },
        tmp2: { [compName]: 'Globex', [compSize]: '7' },
      }),
    })
  )
  const [acmeId, globexId] = acme.newRows.map((row: any) => row.id)
  return {
    book,
    call,
    base,
    catId,
    companiesId: companies.catId,
    f: f as Record<string, number>,
    compName,
    compSize,
    acmeId,
    globexId,
  }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

/** Ada, a contact with a value in most fields, linked to Acme and Globex. */
async function ada(fx: Fixture, rowId = 'tmpNEW_ROW') {
  const { book, call, catId, f, acmeId, globexId } = fx
  return ok(
    await call('createOrUpdateTableRow', {
      rowId,
      catId,
      fieldValues: JSON.stringify({
        [f.name]: 'Ada',
        [f.price]: '2.5',
        [f.qty]: '4',
        [f.born]: '1815-12-10',
        [f.active]: 'true',
        [f.status]: 'won',
        [f.tags]: 'a,c',
        [f.company]: `${acmeId},${globexId}`,
        [f.email]: 'ada@example.test',
        [f.owner]: book.b_o,
      }),
    })
  )
}

const adaCells = async (fx: Fixture) => {
  const created = await ada(fx)
  return created.rows[0].fields
}
const adaId = async (fx: Fixture) => {
  const created = await ada(fx)
  return created.rows[0].id as number
}

/** A caller who is a member of another book only. */
async function strangerCall() {
  const other = await makeBook()
  return caller(other.session)
}

/** `count` new contacts named r0, r1, ... with a price of 2; their ids. */
async function newContacts(fx: Fixture, count: number): Promise<number[]> {
  const created = ok(
    await fx.call('createOrUpdateTableRows', {
      rows: JSON.stringify(
        Object.fromEntries(
          Array.from({ length: count }, (_, i) => [
            `tmp${i}`,
            { [fx.f.name]: `r${i}`, [fx.f.price]: '2' },
          ])
        )
      ),
    })
  )
  return created.newRows.map((row: any) => row.id)
}

test.group('tables: getBookTables', (group) => {
  let fx: Fixture
  let bookTables: Record<string, any>
  group.setup(async () => {
    fx = await fixture()
    bookTables = ok(
      await fx.call('getBookTables', { ...fx.base, includeFields: 'true' })
    ).bookTables
  })

  test('answers the container with its keys and the owner right', ({ assert }) => {
    for (const key of [
      'id',
      'name',
      'description',
      'creator',
      'system',
      'public',
      'lastModified',
      'rights',
      'right',
      'lastTabId',
      'tabs',
      'categories',
    ])
      assert.property(bookTables, key)
    assert.equal(bookTables.right, 4)
    assert.equal(bookTables.creator, fx.book.b_o)
  })

  test('pairs tabs with categories: tabs[i] shows categories[i]', ({ assert }) => {
    assert.lengthOf(bookTables.tabs, bookTables.categories.length)
    bookTables.tabs.forEach((tab: any, index: number) =>
      assert.equal(tab.category_id, bookTables.categories[index].id)
    )
  })

  test('lists a category with its code, locked flag and views', ({ assert }) => {
    const contacts = bookTables.categories.find((category: any) => category.id === fx.catId)
    assert.equal(contacts.code, 'contacts')
    assert.isNumber(contacts.locked)
    assert.isArray(contacts.views)
  })

  test('with includeFields, field definitions carry their keys and enum colors', ({ assert }) => {
    const contacts = bookTables.categories.find((category: any) => category.id === fx.catId)
    const status = contacts.fields.find((field: any) => field.id === fx.f.status)
    for (const key of [
      'id',
      'name',
      'code',
      'fixed_code',
      'type',
      'order',
      'description',
      'readOnly',
      'values',
      'dateFormat',
      'numformat',
      'enumColors',
    ])
      assert.property(status, key)
    assert.deepEqual(status.enumColors.values[0], { value: 'new', color: '#00f' })
    assert.isTrue(status.enumColors.strict)
  })

  test('includeEnums=false leaves enum colors out', async ({ assert }) => {
    const answer = ok(
      await fx.call('getBookTables', { ...fx.base, includeFields: 'true', includeEnums: 'false' })
    )
    const contacts = answer.bookTables.categories.find((c: any) => c.id === fx.catId)
    assert.notProperty(
      contacts.fields.find((x: any) => x.id === fx.f.status),
      'enumColors'
    )
  })

  test('without includeFields, fields is null', async ({ assert }) => {
    const answer = ok(await fx.call('getBookTables', fx.base))
    assert.isNull(answer.bookTables.categories[0].fields)
  })
})

test.group('tables: createOrUpdateTableRow', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('answers the new row with its real id, tmpId and order', async ({ assert }) => {
    const created = await ada(fx)
    assert.lengthOf(created.rows, 1)
    assert.lengthOf(created.newRows, 1)
    assert.equal(created.newRows[0].id, created.rows[0].id)
    assert.equal(created.newRows[0].tmpId, 'tmpNEW_ROW')
    assert.isNumber(created.newRows[0].info.order)
    assert.isNumber(created.formLastModified)
  })

  test('computes the formula, the link caption, the lookup and the rollup of the row', async ({
    assert,
  }) => {
    const cells = await adaCells(fx)
    assert.strictEqual(cells[fx.f.total].value, 10)
    assert.deepEqual(cells[fx.f.company].value, [fx.acmeId, fx.globexId])
    assert.equal(cells[fx.f.company].text, 'Acme, Globex')
    assert.equal(cells[fx.f.companySize].value, '50, 7')
    assert.strictEqual(cells[fx.f.companyCount].value, 2)
  })

  test('stores values converted per type: getTableValues reads them typed', async ({ assert }) => {
    const rowId = await adaId(fx)
    const values = ok(
      await fx.call('getTableValues', { catId: fx.catId, filterRowIds: String(rowId) })
    )
    assert.equal(values.catId, fx.catId)
    assert.equal(values.tableValues.id, fx.catId)
    const cell = (fieldId: number) =>
      values.tableValues.fields.find((field: any) => field.id === fieldId).values[0]
    assert.deepEqual(cell(fx.f.price), { id: rowId, value: 2.5 })
    assert.strictEqual(cell(fx.f.qty).value, 4)
    assert.strictEqual(cell(fx.f.active).value, true)
    assert.strictEqual(cell(fx.f.born).value, '1815-12-10')
    assert.deepEqual(cell(fx.f.tags).value, ['a', 'c'])
    assert.isNull(cell(fx.f.files).value)
    assert.equal(values.tableValues.rowInfos[rowId].index, 0)
  })

  test('a tmp id is scoped to its request: the same tmp id next time is another row', async ({
    assert,
  }) => {
    const first = await adaId(fx)
    const second = await adaId(fx)
    assert.notEqual(second, first)
    const both = ok(
      await fx.call('getTableValueSubset', {
        catId: fx.catId,
        fieldIds: String(fx.f.name),
        rowIds: `${first},${second}`,
      })
    )
    assert.deepEqual(both.tableValues, [['Ada'], ['Ada']])
  })

  test('takes fieldValues in bracket form', async ({ assert }) => {
    const one = ok(
      await fx.call('createOrUpdateTableRow', {
        rowId: 'tmp-1',
        fieldValues: { [fx.f.name]: 'bracket' },
      })
    )
    const rows = await rowsOf(fx.call, fx.catId)
    assert.equal(rows[one.rows[0].id][fx.f.name], 'bracket')
  })

  test('a change in a linked row reaches the lookup through tables.recompute', async ({
    assert,
  }) => {
    // Its own tables: the change reaches every row linking to Acme.
    const own = await fixture()
    const rowId = await adaId(own)
    ok(
      await own.call('updateTableValue', {
        rowId: String(own.acmeId),
        fieldId: own.compSize,
        value: '60',
      })
    )
    let subset: unknown
    await eventually(async () => {
      subset = ok(
        await own.call('getTableValueSubset', {
          catId: own.catId,
          fieldIds: `${own.f.companySize},${own.f.name}`,
          rowIds: String(rowId),
        })
      ).tableValues
      return JSON.stringify(subset) === JSON.stringify([['60, 7', 'Ada']])
    })
    assert.deepEqual(subset, [['60, 7', 'Ada']])
  })
})

test.group('tables: a bad value', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('{label} is a nok naming the field, and nothing of the request is written')
    .with([
      { label: 'a double "abc"', field: 'price', value: 'abc' },
      { label: 'a date "2025-02-31"', field: 'born', value: '2025-02-31' },
      { label: 'an integer "1.5"', field: 'qty', value: '1.5' },
      { label: 'a strict enum "maybe"', field: 'status', value: 'maybe' },
      { label: 'an email "nope"', field: 'email', value: 'nope' },
      { label: 'a checkbox "perhaps"', field: 'active', value: 'perhaps' },
      { label: 'a link to a missing row', field: 'company', value: '999' },
      { label: 'a user no one is', field: 'owner', value: 'nobody-at-all' },
    ])
    .run(async ({ assert }, { field, value }) => {
      const fieldId = fx.f[field]
      const answer = await fx.call('createOrUpdateTableRows', {
        b_o: '',
        rows: JSON.stringify({ tmp1: { [fx.f.name]: 'ok' }, tmp2: { [fieldId]: value } }),
      })
      assert.equal(answer.status, 'nok')
      assert.equal(answer.errorCode, 'INVALID_PARAMETER')
      assert.include(answer.errorMsg, `(${fieldId})`)
      const count = ok(
        await fx.call('computeTableOperation', { catId: fx.catId, operation: 'count' })
      )
      assert.strictEqual(count.result, 0)
    })

  test('a missing linked row is named before a missing user, and nothing is written', async ({
    assert,
  }) => {
    const answer = await fx.call('createOrUpdateTableRows', {
      b_o: '',
      rows: JSON.stringify({
        tmp1: { [fx.f.owner]: 'nobody-at-all' },
        tmp2: { [fx.f.company]: '999' },
      }),
    })
    assert.equal(answer.errorCode, 'INVALID_PARAMETER')
    assert.include(answer.errorMsg, `(${fx.f.company})`)
    const count = ok(
      await fx.call('computeTableOperation', { catId: fx.catId, operation: 'count' })
    )
    assert.strictEqual(count.result, 0)
  })
})

test.group('tables: createOrUpdateTableRows and deletes', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('in {$self} form: creates rows, updates one, deletes them with deleteTableRows')
    .with(ALL_FORMS)
    .run(async ({ assert }, form) => {
      const answer = ok(
        await fx.call(
          'createOrUpdateTableRows',
          {
            b_o: fx.book.b_o,
            rows: {
              tmp_1: { [fx.f.name]: `x ${form}`, [fx.f.qty]: '3' },
              tmp_2: { [fx.f.name]: 'y' },
            },
          },
          form
        )
      )
      assert.strictEqual(answer.created, 2)
      assert.strictEqual(answer.modified, 0)
      const ids = answer.newRows.map((row: any) => row.id)
      const update = ok(
        await fx.call(
          'createOrUpdateTableRows',
          { rows: JSON.stringify({ [ids[0]]: { [fx.f.qty]: '5' } }) },
          form
        )
      )
      assert.strictEqual(update.modified, 1)
      const deleted = ok(await fx.call('deleteTableRows', { b_o: fx.book.b_o, rows: ids }, form))
      assert.strictEqual(deleted.deleted, 2)
    })

  test('deleteTableRows takes a comma list and skips tmp ids', async ({ assert }) => {
    const ids = await newContacts(fx, 2)
    const deleted = ok(await fx.call('deleteTableRows', { rows: `${ids[0]},tmp_3,${ids[1]}` }))
    assert.strictEqual(deleted.deleted, 2)
    assert.equal(await errorCode(fx.call('deleteTableRows', { rows: 'x1' })), 'INVALID_PARAMETER')
  })

  test('deleteTableRow answers the id; the row is gone, a second delete is NOT_FOUND', async ({
    assert,
  }) => {
    const [id] = await newContacts(fx, 1)
    const removed = ok(await fx.call('deleteTableRow', { rowId: String(id) }))
    assert.equal(removed.id, id)
    assert.isNumber(removed.formLastModified)
    const left = ok(
      await fx.call('getTableValueSubset', {
        catId: fx.catId,
        fieldIds: String(fx.f.name),
        rowIds: String(id),
      })
    )
    assert.deepEqual(left.tableValues, [])
    assert.equal(await errorCode(fx.call('deleteTableRow', { rowId: String(id) })), 'NOT_FOUND')
  })

  test('deleteTableRow of a tmp id deletes nothing and answers the tmpId', async ({ assert }) => {
    const [id] = await newContacts(fx, 1)
    const tmp = ok(await fx.call('deleteTableRow', { rowId: 'tmp_9' }))
    assert.equal(tmp.tmpId, 'tmp_9')
    assert.isNull(tmp.id)
    const kept = ok(
      await fx.call('getTableValueSubset', {
        catId: fx.catId,
        fieldIds: String(fx.f.name),
        rowIds: String(id),
      })
    )
    assert.deepEqual(kept.tableValues, [['r0']])
  })

  test('new rows get ord = id, also after another writer moved the table sequence', async ({
    assert,
  }) => {
    // Its own table: the test counts every row.
    const own = await fixture()
    const { catId } = own
    await newContacts(own, 3)
    await newContacts(own, 2) // inserted with the ids this process expected
    // Another instance inserted a row: the next ids are not the expected ones.
    const [other] = await db.table(`tt_${catId}`).insert({ ord: 0, sstamp: 0 })
    await db.from(`tt_${catId}`).where('id', other).update({ ord: other })
    const ids = await newContacts(own, 2)
    const [misplaced] = await db.from(`tt_${catId}`).whereRaw('ord <> id').count('* as total')
    assert.strictEqual(Number(misplaced.total), 0)
    const values = ok(await own.call('getTableValues', { catId, maxRows: 100 })).tableValues
    assert.strictEqual(values.rowInfosLength, 8)
    for (const id of ids) assert.strictEqual(values.rowInfos[id].order, id)
  })

  test('a write rolled back emits no event and writes nothing', async ({ assert }) => {
    // Its own table: no other write may announce a change of it.
    const own = await fixture()
    const [id] = await newContacts(own, 1)
    ok(await own.call('deleteTableRow', { rowId: String(id) }))
    const { events, stop } = rowsChangedEvents()
    try {
      // The new row is valid; the deleted one is found missing inside the transaction.
      const answer = await own.call('createOrUpdateTableRows', {
        rows: JSON.stringify({ tmp1: { [own.f.name]: 'new' }, [id]: { [own.f.name]: 'gone' } }),
      })
      assert.equal(answer.errorCode, 'NOT_FOUND')
      // An event of a later write arrives after any of the failed one would have.
      ok(
        await own.call('createOrUpdateTableRows', {
          catId: own.companiesId,
          rows: JSON.stringify({ tmp1: { [own.compName]: 'Later' } }),
        })
      )
      await eventually(async () => events.some((event) => event.categoryId === own.companiesId))
    } finally {
      stop()
    }
    assert.isFalse(events.some((event) => event.categoryId === own.catId))
    assert.strictEqual(
      ok(await own.call('computeTableOperation', { catId: own.catId, operation: 'count' })).result,
      0
    )
  })
})

test.group('tables: updateTableValue', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('concurrent writes to different rows all commit, each with its value', async ({
    assert,
  }) => {
    const ids = await newContacts(fx, 6)
    const answers = await Promise.all(
      ids.map((id, i) =>
        fx.call('updateTableValue', { rowId: String(id), fieldId: fx.f.qty, value: String(i + 1) })
      )
    )
    for (const answer of answers) ok(answer)
    const rows = await rowsOf(fx.call, fx.catId)
    ids.forEach((id, i) => assert.strictEqual(rows[id][fx.f.qty], i + 1))
  })

  test('formulas of the written rows follow', async ({ assert }) => {
    const ids = await newContacts(fx, 3)
    await Promise.all(
      ids.map((id, i) =>
        fx.call('updateTableValue', { rowId: String(id), fieldId: fx.f.qty, value: String(i + 1) })
      )
    )
    const rows = await rowsOf(fx.call, fx.catId)
    ids.forEach((id, i) => assert.strictEqual(rows[id][fx.f.total], 2 * (i + 1)))
  })

  test('a missing row and a bad value fail alone beside concurrent writes', async ({ assert }) => {
    const ids = await newContacts(fx, 3)
    const [a, b, missing, bad] = await Promise.all([
      fx.call('updateTableValue', { rowId: String(ids[0]), fieldId: fx.f.qty, value: '1' }),
      fx.call('updateTableValue', { rowId: String(ids[1]), fieldId: fx.f.qty, value: '2' }),
      fx.call('updateTableValue', { rowId: String(ids[2] + 1000), fieldId: fx.f.qty, value: '1' }),
      fx.call('updateTableValue', { rowId: String(ids[2]), fieldId: fx.f.qty, value: 'x' }),
    ])
    ok(a)
    ok(b)
    assert.equal(missing.errorCode, 'NOT_FOUND')
    assert.equal(bad.errorCode, 'INVALID_PARAMETER')
    const rows = await rowsOf(fx.call, fx.catId)
    assert.deepEqual(
      [rows[ids[0]][fx.f.qty], rows[ids[1]][fx.f.qty], rows[ids[2]][fx.f.qty]],
      [1, 2, null]
    )
  })

  test('a field added after the metadata was cached is written, and a formula over it follows', async ({
    assert,
  }) => {
    // Its own table: the formula changes for every row.
    const own = await fixture()
    const [id] = await newContacts(own, 1)
    ok(await own.call('updateTableValue', { rowId: String(id), fieldId: own.f.qty, value: '1' }))
    const bonus = ok(
      await own.call('createField', { catId: own.catId, name: 'Bonus', type: 'integer' })
    ).fieldId
    ok(
      await own.call('updateField', {
        fieldId: own.f.total,
        options: JSON.stringify({ formula: '{Price} * {Qty} + {Bonus}' }),
      })
    )
    ok(await own.call('updateTableValue', { rowId: String(id), fieldId: bonus, value: '5' }))
    const rows = await rowsOf(own.call, own.catId)
    assert.strictEqual(rows[id][bonus], 5)
    assert.strictEqual(rows[id][own.f.total], 7)
  })

  test("another instance's structure change (meta_version moved) sends the write through the general path", async ({
    assert,
  }) => {
    const [id] = await newContacts(fx, 1)
    ok(await fx.call('updateTableValue', { rowId: String(id), fieldId: fx.f.qty, value: '1' }))
    await db.from('table_categories').where('id', fx.catId).update({ meta_version: Date.now() })
    ok(await fx.call('updateTableValue', { rowId: String(id), fieldId: fx.f.qty, value: '3' }))
    const rows = await rowsOf(fx.call, fx.catId)
    assert.strictEqual(rows[id][fx.f.total], 6)
  })

  test('fieldId as text and no b_o: the table is inferred from the field', async ({ assert }) => {
    const [id] = await newContacts(fx, 1)
    ok(
      await fx.call('updateTableValue', {
        rowId: String(id),
        fieldId: String(fx.f.qty),
        value: '6',
      })
    )
    const rows = await rowsOf(fx.call, fx.catId)
    assert.strictEqual(rows[id][fx.f.qty], 6)
  })
})

/**
 * A burst of one-cell writes through RowsService, all issued before any is
 * answered: Companies has no formula (the UPDATE itself checks the metadata
 * version), Contacts has one (its rows are read first); both tables, the same
 * rows twice, and one missing row. (The order of concurrent calls is not
 * defined: a row's two writes touch different cells.)
 */
async function burst() {
  const fx = await fixture()
  const { book, call, f, compName, compSize, acmeId, globexId } = fx
  const more = ok(
    await call('createOrUpdateTableRows', {
      b_o: book.b_o,
      rows: JSON.stringify({
        tmp1: { [compName]: 'Initech', [compSize]: '3' },
        tmp2: { [compName]: 'Hooli', [compSize]: '4' },
      }),
    })
  )
  const [initechId, hooliId] = more.newRows.map((row: any) => row.id)
  const people = ok(
    await call('createOrUpdateTableRows', {
      b_o: book.b_o,
      rows: JSON.stringify({
        tmp1: { [f.name]: 'Ann', [f.price]: '2', [f.company]: String(acmeId) },
        tmp2: { [f.name]: 'Bob', [f.price]: '3', [f.active]: 'true' },
      }),
    })
  )
  const [annId, bobId] = people.newRows.map((row: any) => row.id)
  const rows = await app.container.make(RowsService)
  const actor = ownerActor(book)
  const write = (rowId: number, fieldId: number, value: string) =>
    rows.updateValue(actor, { rowId: String(rowId), fieldId, value })
  const { events, stop } = rowsChangedEvents()
  let results: PromiseSettledResult<unknown>[]
  try {
    results = await Promise.allSettled([
      write(acmeId, compSize, '10'),
      write(globexId, compSize, '21'),
      write(initechId, compName, 'Initech 2'),
      write(globexId, compName, 'Globex 2'),
      write(hooliId, compSize, '40'),
      write(hooliId + 1000, compSize, '1'),
      write(annId, f.qty, '5'),
      write(bobId, f.qty, '7'),
      write(annId, f.active, 'true'),
      write(bobId, f.active, 'false'),
      write(annId, f.price, '2.5'),
    ])
  } finally {
    stop()
  }
  return { ...fx, results, events, initechId, hooliId, annId, bobId, missingIndex: 5 }
}

test.group('tables: group commit of cell writes', (group) => {
  let shot: Awaited<ReturnType<typeof burst>>
  group.setup(async () => {
    shot = await burst()
  })

  test('every write of a burst keeps its own outcome: only the missing row is refused', async ({
    assert,
  }) => {
    const { results, missingIndex } = shot
    results.forEach((result, i) => {
      if (i === missingIndex) {
        assert.equal(result.status, 'rejected')
        assert.equal((result as PromiseRejectedResult).reason.code, 'NOT_FOUND')
      } else assert.equal(result.status, 'fulfilled', `write ${i}`)
    })
  })

  test('writes arriving together commit together: one event per written cell, fewer stamps than events', async ({
    assert,
  }) => {
    const { events } = shot
    assert.lengthOf(events, 10)
    assert.isBelow(new Set(events.map((event) => event.stamp)).size, events.length)
  })

  test('a table without formulas gets every write, a row written twice both', async ({
    assert,
  }) => {
    const { call, companiesId, compName, compSize, acmeId, globexId, initechId, hooliId } = shot
    const companies = await rowsOf(call, companiesId)
    assert.strictEqual(companies[acmeId][compSize], 10)
    assert.strictEqual(companies[globexId][compSize], 21)
    assert.strictEqual(companies[globexId][compName], 'Globex 2')
    assert.strictEqual(companies[initechId][compName], 'Initech 2')
    assert.strictEqual(companies[hooliId][compSize], 40)
  })

  test('a table with formulas gets every write, and its formulas follow them', async ({
    assert,
  }) => {
    const { call, catId, f, annId, bobId } = shot
    const people = await rowsOf(call, catId)
    assert.strictEqual(people[annId][f.qty], 5)
    assert.strictEqual(people[annId][f.price], 2.5)
    assert.strictEqual(people[annId][f.total], 12.5)
    assert.strictEqual(people[annId][f.active], true)
    assert.strictEqual(people[bobId][f.qty], 7)
    assert.strictEqual(people[bobId][f.total], 21)
    assert.strictEqual(people[bobId][f.active], false)
  })

  test('the lookup of a linking row follows a burst through tables.recompute', async ({
    assert,
  }) => {
    const { call, catId, f, annId } = shot
    let size: unknown
    await eventually(async () => {
      const rows = await rowsOf(call, catId)
      size = rows[annId][f.companySize]
      return String(size) === '10'
    })
    assert.equal(String(size), '10')
  })

  test('a structure changed by another instance: the version guard writes nothing, the general path reloads and writes', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { book, call, companiesId, acmeId } = fx
    // A field that no link shows: no recompute job reloads the metadata behind the write's back.
    const note = ok(
      await call('createField', {
        b_o: book.b_o,
        catId: companiesId,
        name: 'Note',
        type: 'shorttext',
      })
    ).fieldId as number
    ok(await call('updateTableValue', { rowId: String(acmeId), fieldId: note, value: 'a' }))
    const bumped = Date.now()
    const meta = await app.container.make(MetaService)
    await db.from('table_categories').where('id', companiesId).update({ meta_version: bumped })
    assert.notEqual(meta.cached(companiesId)?.category.metaVersion, bumped)
    ok(await call('updateTableValue', { rowId: String(acmeId), fieldId: note, value: 'b' }))
    assert.equal(meta.cached(companiesId)?.category.metaVersion, bumped)
    const rows = await rowsOf(call, companiesId)
    assert.strictEqual(rows[acmeId][note], 'b')
  })
})

test.group('tables: rights', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('a reader reads, and cannot write (FORBIDDEN)', async ({ assert }) => {
    const reader = caller(fx.book.members[0].session)
    ok(await reader('getTableValues', { catId: fx.catId }))
    assert.equal(
      await errorCode(
        reader('updateTableValue', { rowId: 'tmp1', fieldId: fx.f.name, value: 'x' })
      ),
      'FORBIDDEN'
    )
  })

  test('a writer writes cells, and cannot change the structure (FORBIDDEN)', async ({ assert }) => {
    const writer = caller(fx.book.members[1].session)
    ok(await writer('updateTableValue', { rowId: 'tmp1', fieldId: fx.f.name, value: 'x' }))
    assert.equal(
      await errorCode(writer('createField', { catId: fx.catId, name: 'X', type: 'shorttext' })),
      'FORBIDDEN'
    )
  })

  test('a non-member finds nothing (NOT_FOUND)', async ({ assert }) => {
    const stranger = await strangerCall()
    assert.equal(await errorCode(stranger('getTableValues', { catId: fx.catId })), 'NOT_FOUND')
  })

  test('without a session, a table that is not public is refused', async ({ assert }) => {
    const anonymous = caller(null)
    assert.equal(await statusOf(anonymous('getTableValues', { catId: fx.catId })), 'nok')
    assert.equal(await statusOf(anonymous('getBookTables', fx.base)), 'nok')
  })
})

test.group('tables: public tables', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
    await newContacts(fx, 1)
    ok(await fx.call('updateTable', { catId: fx.catId, public: 'yes' }))
  })

  test('are read without a session and by non-members', async ({ assert }) => {
    const anonymous = caller(null)
    const open = ok(await anonymous('getTableValues', { catId: fx.catId }))
    assert.strictEqual(open.tableValues.rowInfosLength, 1)
    ok(await anonymous('getBookTables', fx.base))
    ok(await (await strangerCall())('getTableValues', { catId: fx.catId }))
  })

  test('are not written without a session, nor by non-members', async ({ assert }) => {
    const write = { rowId: 'tmp1', fieldId: fx.f.name, value: 'x' }
    assert.equal(await statusOf(caller(null)('updateTableValue', write)), 'nok')
    const stranger = await strangerCall()
    assert.equal(await errorCode(stranger('updateTableValue', write)), 'NOT_FOUND')
  })
})
