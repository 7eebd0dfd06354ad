import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import { NO_RESTRICTIONS } from '#models/api_session'
import { rowsService } from '#plugins/tables/services/rows_service'
import { metaService } from '#plugins/tables/services/meta_service'
import type { RowsChanged } from '#plugins/tables/events'
import { ALL_FORMS } from '#tests/helpers/rpc'
import { caller, errorCode, eventually, makeBook, ok, statusOf } from '../helpers/tables.js'

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

test.group('tables: structure and writes', () => {
  test('createTable, fields, getBookTables pairs tabs with categories and lists field definitions', async ({
    assert,
  }) => {
    const { call, base, catId, f } = await fixture()
    const answer = ok(await call('getBookTables', { ...base, includeFields: 'true' }))
    const bookTables = answer.bookTables
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
    ]) {
      assert.property(bookTables, key)
    }
    assert.equal(bookTables.right, 4)
    assert.lengthOf(bookTables.tabs, bookTables.categories.length)
    bookTables.tabs.forEach((tab: any, index: number) =>
      assert.equal(tab.category_id, bookTables.categories[index].id)
    )
    const contacts = bookTables.categories.find((category: any) => category.id === catId)
    assert.equal(contacts.code, 'contacts')
    assert.isNumber(contacts.locked)
    assert.isArray(contacts.views)
    const status = contacts.fields.find((field: any) => field.id === f.status)
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
    ]) {
      assert.property(status, key)
    }
    assert.deepEqual(status.enumColors.values[0], { value: 'new', color: '#00f' })
    assert.isTrue(status.enumColors.strict)
    const withoutEnums = ok(
      await call('getBookTables', { ...base, includeFields: 'true', includeEnums: 'false' })
    )
    assert.notProperty(
      withoutEnums.bookTables.categories
        .find((c: any) => c.id === catId)
        .fields.find((x: any) => x.id === f.status),
      'enumColors'
    )
    const noFields = ok(await call('getBookTables', base))
    assert.isNull(noFields.bookTables.categories[0].fields)
  })

  test('createOrUpdateTableRow creates, converts and computes (formula, link, lookup, rollup)', async ({
    assert,
  }) => {
    const { book, call, catId, f, acmeId, globexId } = await fixture()
    const created = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmpNEW_ROW',
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
    assert.lengthOf(created.rows, 1)
    assert.lengthOf(created.newRows, 1)
    const rowId = created.rows[0].id
    assert.equal(created.newRows[0].id, rowId)
    assert.equal(created.newRows[0].tmpId, 'tmpNEW_ROW')
    assert.isNumber(created.newRows[0].info.order)
    assert.isNumber(created.formLastModified)
    const cells = created.rows[0].fields
    assert.strictEqual(cells[f.total].value, 10)
    assert.deepEqual(cells[f.company].value, [acmeId, globexId])
    assert.equal(cells[f.company].text, 'Acme, Globex')
    assert.equal(cells[f.companySize].value, '50, 7')
    assert.strictEqual(cells[f.companyCount].value, 2)
    // the same tmp id in the next request makes another row (tmp ids are scoped to one request)
    const second = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmpNEW_ROW',
        fieldValues: JSON.stringify({ [f.name]: 'Grace' }),
      })
    )
    assert.notEqual(second.rows[0].id, rowId)

    const values = ok(await call('getTableValues', { catId }))
    assert.equal(values.catId, catId)
    assert.equal(values.tableValues.id, catId)
    assert.equal(values.tableValues.rowInfosLength, 2)
    const byId = (fieldId: number) =>
      values.tableValues.fields.find((field: any) => field.id === fieldId).values
    assert.deepEqual(byId(f.price)[0], { id: rowId, value: 2.5 })
    assert.strictEqual(byId(f.qty)[0].value, 4)
    assert.strictEqual(byId(f.active)[0].value, true)
    assert.strictEqual(byId(f.born)[0].value, '1815-12-10')
    assert.deepEqual(byId(f.tags)[0].value, ['a', 'c'])
    assert.isNull(byId(f.files)[0].value)
    assert.equal(values.tableValues.rowInfos[rowId].index, 0)

    // A change in the linked table reaches the lookup through the tables.recompute job.
    const tables = await call('getBookTables', { b_o: book.b_o, b_c: book.b_c, includeFields: '1' })
    ok(
      await call('updateTableValue', {
        rowId: String(acmeId),
        fieldId: tables.bookTables.categories[0].fields[1].id,
        value: '60',
      })
    )
    let subset: Record<string, any> = {}
    await eventually(async () => {
      subset = ok(
        await call('getTableValueSubset', {
          catId,
          fieldIds: `${f.companySize},${f.name}`,
          rowIds: String(rowId),
        })
      )
      return subset.tableValues[0][0] === '60, 7'
    })
    assert.deepEqual(subset.tableValues, [['60, 7', 'Ada']])
  })

  test('updateTableValue on existing rows: concurrent cells commit together, a missing row fails alone, formulas follow, new fields are seen', async ({
    assert,
  }) => {
    const { call, catId, f } = await fixture()
    const created = ok(
      await call('createOrUpdateTableRows', {
        rows: JSON.stringify(
          Object.fromEntries(
            Array.from({ length: 6 }, (_, i) => [`tmp${i}`, { [f.name]: `r${i}`, [f.price]: '2' }])
          )
        ),
      })
    )
    const ids: number[] = created.newRows.map((row: any) => row.id)
    const missing = ids[ids.length - 1] + 1000
    const answers = await Promise.all([
      ...ids.map((id, i) =>
        call('updateTableValue', { rowId: String(id), fieldId: f.qty, value: String(i + 1) })
      ),
      call('updateTableValue', { rowId: String(missing), fieldId: f.qty, value: '1' }),
      call('updateTableValue', { rowId: String(ids[0]), fieldId: f.qty, value: 'x' }),
    ])
    for (const answer of answers.slice(0, ids.length)) ok(answer)
    assert.equal(answers[ids.length].errorCode, 'NOT_FOUND')
    assert.equal(answers[ids.length + 1].errorCode, 'INVALID_PARAMETER')
    const values = ok(await call('getTableValues', { catId, format: 'diff_ready_rows' }))
    ids.forEach((id, i) => {
      assert.strictEqual(values.tableValues.rows[id][f.qty], i + 1)
      assert.strictEqual(values.tableValues.rows[id][f.total], 2 * (i + 1))
    })
    // A field added after the metadata was cached: the write sees it (formula over it included).
    const extra = ok(await call('createField', { catId, name: 'Bonus', type: 'integer' }))
      .fieldId as number
    ok(
      await call('updateField', {
        fieldId: f.total,
        options: JSON.stringify({ formula: '{Price} * {Qty} + {Bonus}' }),
      })
    )
    ok(await call('updateTableValue', { rowId: String(ids[0]), fieldId: extra, value: '5' }))
    const after = ok(await call('getTableValues', { catId, format: 'diff_ready_rows' }))
    assert.strictEqual(after.tableValues.rows[ids[0]][extra], 5)
    assert.strictEqual(after.tableValues.rows[ids[0]][f.total], 7)
    // Another instance changed the structure (meta_version moved, this cache not told): the
    // version read with the row sends the write through the general path, which reloads.
    await db.from('table_categories').where('id', catId).update({ meta_version: Date.now() })
    ok(await call('updateTableValue', { rowId: String(ids[1]), fieldId: extra, value: '1' }))
    const reloaded = ok(await call('getTableValues', { catId, format: 'diff_ready_rows' }))
    assert.strictEqual(reloaded.tableValues.rows[ids[1]][f.total], 5)
  })

  test('cell writes arriving together share one transaction: one UPDATE per table, each write keeps its outcome, a row written twice in a batch gets both writes', async ({
    assert,
  }) => {
    const { book, call, catId, f, companiesId, compName, compSize, acmeId, globexId } =
      await fixture()
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
    const contacts = ok(
      await call('createOrUpdateTableRows', {
        b_o: book.b_o,
        rows: JSON.stringify({
          tmp1: { [f.name]: 'Ann', [f.price]: '2', [f.company]: String(acmeId) },
          tmp2: { [f.name]: 'Bob', [f.price]: '3', [f.active]: 'true' },
        }),
      })
    )
    const [annId, bobId] = contacts.newRows.map((row: any) => row.id)
    const actor = {
      user: book.owner,
      principal: book.owner,
      session: null,
      restrictions: NO_RESTRICTIONS,
      onBehalf: false,
    } as any
    const write = (rowId: number, fieldId: number, value: string) =>
      rowsService.updateValue(actor, { rowId: String(rowId), fieldId, value })
    const events: RowsChanged[] = []
    const listener = (event: RowsChanged) => events.push(event)
    emitter.on('tables:rows_changed', listener)
    let results: PromiseSettledResult<unknown>[]
    try {
      // Companies has no formula (the UPDATE itself checks the metadata version), Contacts has
      // one (its rows are read first); both tables, and the same rows twice, in one burst. (The
      // order of concurrent calls is not defined: a row's two writes touch different cells.)
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
      emitter.off('tables:rows_changed', listener)
    }
    results.forEach((result, i) => {
      if (i === 5) {
        assert.equal(result.status, 'rejected')
        assert.equal((result as PromiseRejectedResult).reason.code, 'NOT_FOUND')
      } else assert.equal(result.status, 'fulfilled', `write ${i}`)
    })
    // One event per written cell, none for the missing row; writes that arrived while a
    // transaction was in flight committed together (same stamp).
    assert.lengthOf(events, 10)
    assert.isBelow(new Set(events.map((event) => event.stamp)).size, events.length)
    const companies = ok(
      await call('getTableValues', { catId: companiesId, format: 'diff_ready_rows' })
    ).tableValues.rows
    assert.strictEqual(companies[acmeId][compSize], 10)
    assert.strictEqual(companies[globexId][compSize], 21)
    assert.strictEqual(companies[globexId][compName], 'Globex 2')
    assert.strictEqual(companies[initechId][compName], 'Initech 2')
    assert.strictEqual(companies[hooliId][compSize], 40)
    const people = ok(await call('getTableValues', { catId, format: 'diff_ready_rows' }))
      .tableValues.rows
    assert.strictEqual(people[annId][f.qty], 5)
    assert.strictEqual(people[annId][f.price], 2.5)
    assert.strictEqual(people[annId][f.total], 12.5)
    assert.strictEqual(people[annId][f.active], true)
    assert.strictEqual(people[bobId][f.qty], 7)
    assert.strictEqual(people[bobId][f.total], 21)
    assert.strictEqual(people[bobId][f.active], false)
    // The lookup of Ann (through her link to Acme) follows through tables.recompute.
    await eventually(async () => {
      const rows = ok(await call('getTableValues', { catId, format: 'diff_ready_rows' }))
        .tableValues.rows
      return String(rows[annId][f.companySize]) === '10'
    })
    // Another instance changed Companies' structure: the UPDATE's version check writes
    // nothing and the general path (which reloads the metadata) writes the cell. (A field that
    // no link shows: no recompute job reloads the metadata behind the write's back.)
    const note = ok(
      await call('createField', {
        b_o: book.b_o,
        catId: companiesId,
        name: 'Note',
        type: 'shorttext',
      })
    ).fieldId as number
    ok(await call('updateTableValue', { rowId: String(hooliId), fieldId: note, value: 'a' }))
    const bumped = Date.now()
    await db.from('table_categories').where('id', companiesId).update({ meta_version: bumped })
    assert.notEqual(metaService.cached(companiesId)?.category.metaVersion, bumped)
    ok(await call('updateTableValue', { rowId: String(hooliId), fieldId: note, value: 'b' }))
    assert.equal(metaService.cached(companiesId)?.category.metaVersion, bumped)
    const reloaded = ok(
      await call('getTableValues', { catId: companiesId, format: 'diff_ready_rows' })
    ).tableValues.rows
    assert.strictEqual(reloaded[hooliId][note], 'b')
  })

  test('new rows get ord = id, also after another writer moved the table sequence', async ({
    assert,
  }) => {
    const { book, call, catId, f } = await fixture()
    const create = async (count: number) =>
      ok(
        await call('createOrUpdateTableRows', {
          b_o: book.b_o,
          rows: JSON.stringify(
            Object.fromEntries(
              Array.from({ length: count }, (_, i) => [`tmp${i}`, { [f.name]: `n${i}` }])
            )
          ),
        })
      )
    const misplaced = async () => {
      const [row] = await db.from(`tt_${catId}`).whereRaw('ord <> id').count('* as total')
      return Number(row.total)
    }
    await create(3)
    await create(2) // inserted with the ids this process expected
    // Another instance inserted a row: the next ids are not the expected ones.
    const [other] = await db.table(`tt_${catId}`).insert({ ord: 0, sstamp: 0 })
    await db.from(`tt_${catId}`).where('id', other).update({ ord: other })
    const last = await create(2)
    for (const row of last.newRows) assert.strictEqual(row.info.order, row.id)
    assert.strictEqual(await misplaced(), 0)
    const values = ok(await call('getTableValues', { catId, maxRows: 100 })).tableValues
    assert.strictEqual(values.rowInfosLength, 8)
    for (const [id, info] of Object.entries(values.rowInfos) as [string, any][])
      assert.strictEqual(info.order, Number(id))
  })

  test('a bad value is a nok naming the field, and nothing of the request is written', async ({
    assert,
  }) => {
    const { call, catId, f } = await fixture()
    for (const [fieldId, value] of [
      [f.price, 'abc'],
      [f.born, '2025-02-31'],
      [f.qty, '1.5'],
      [f.status, 'maybe'],
      [f.email, 'nope'],
      [f.active, 'perhaps'],
      [f.company, '999'],
    ] as const) {
      const answer = await call('createOrUpdateTableRows', {
        b_o: '',
        rows: JSON.stringify({ tmp1: { [f.name]: 'ok' }, tmp2: { [fieldId]: value } }),
      })
      assert.equal(answer.status, 'nok', `${fieldId}=${value}`)
      assert.equal(answer.errorCode, 'INVALID_PARAMETER')
      assert.isString(answer.errorMsg)
    }
    const count = ok(await call('computeTableOperation', { catId, operation: 'count' }))
    assert.strictEqual(count.result, 0)
  })

  test('createOrUpdateTableRows in bracket and JSON forms; deleteTableRow(s)', async ({
    assert,
  }) => {
    const { book, call, catId, f } = await fixture()
    for (const form of ALL_FORMS) {
      const answer = ok(
        await call(
          'createOrUpdateTableRows',
          {
            b_o: book.b_o,
            rows: { tmp_1: { [f.name]: `x ${form}`, [f.qty]: '3' }, tmp_2: { [f.name]: 'y' } },
          },
          form
        )
      )
      assert.strictEqual(answer.created, 2)
      assert.strictEqual(answer.modified, 0)
      const ids = answer.newRows.map((row: any) => row.id)
      const update = ok(
        await call(
          'createOrUpdateTableRows',
          { rows: JSON.stringify({ [ids[0]]: { [f.qty]: '5' } }) },
          form
        )
      )
      assert.strictEqual(update.modified, 1)
      const deleted = ok(await call('deleteTableRows', { b_o: book.b_o, rows: ids }, form))
      assert.strictEqual(deleted.deleted, 2)
    }
    const one = ok(
      await call('createOrUpdateTableRow', { rowId: 'tmp-1', fieldValues: { [f.name]: 'bracket' } })
    )
    const removed = ok(await call('deleteTableRow', { rowId: String(one.rows[0].id) }))
    assert.equal(removed.id, one.rows[0].id)
    assert.isNumber(removed.formLastModified)
    const again = await call('deleteTableRow', { rowId: String(one.rows[0].id) })
    assert.equal(again.errorCode, 'NOT_FOUND')
    const tmp = ok(await call('deleteTableRow', { rowId: 'tmp_9' }))
    assert.equal(tmp.tmpId, 'tmp_9')
    assert.strictEqual(
      ok(await call('computeTableOperation', { catId, operation: 'count' })).result,
      0
    )
  })

  test('rights: readers read, cannot write; non-members see nothing; public tables need no sesskey', async ({
    assert,
  }) => {
    const { book, call, base, catId, f } = await fixture()
    const reader = caller(book.members[0].session)
    const writer = caller(book.members[1].session)
    ok(await reader('getTableValues', { catId }))
    assert.equal(
      await errorCode(reader('updateTableValue', { rowId: 'tmp1', fieldId: f.name, value: 'x' })),
      'FORBIDDEN'
    )
    ok(await writer('updateTableValue', { rowId: 'tmp1', fieldId: f.name, value: 'x' }))
    assert.equal(
      await errorCode(writer('createField', { catId, name: 'X', type: 'shorttext' })),
      'FORBIDDEN'
    )
    const strangerBook = await makeBook()
    const stranger = caller(strangerBook.session)
    assert.equal(await errorCode(stranger('getTableValues', { catId })), 'NOT_FOUND')
    const anonymous = caller(null)
    assert.equal(await statusOf(anonymous('getTableValues', { catId })), 'nok')
    assert.equal(await statusOf(anonymous('getBookTables', base)), 'nok')
    ok(await call('updateTable', { catId, public: 'true' }))
    const open = ok(await anonymous('getTableValues', { catId }))
    assert.strictEqual(open.tableValues.rowInfosLength, 1)
    ok(await anonymous('getBookTables', base))
    ok(await stranger('getTableValues', { catId }))
    assert.equal(
      await statusOf(anonymous('updateTableValue', { rowId: 'tmp1', fieldId: f.name, value: 'x' })),
      'nok'
    )
    assert.equal(
      await errorCode(stranger('updateTableValue', { rowId: 'tmp1', fieldId: f.name, value: 'x' })),
      'NOT_FOUND'
    )
  })
})
