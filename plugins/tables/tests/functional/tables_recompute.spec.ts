import { test } from '@japa/runner'
import emitter from '@adonisjs/core/services/emitter'
import type { RowsChanged } from '#plugins/tables/events'
import { rowsService } from '#plugins/tables/services/rows_service'
import { caller, eventually, makeBook, ok } from '../helpers/tables.js'

/** Companies (Name, Size) and Contacts linking to them, with a lookup and a rollup through the link. */
async function fixture() {
  const book = await makeBook()
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const companies = ok(
    await call('createTable', {
      ...base,
      name: 'Companies',
      fields: JSON.stringify([
        { name: 'Name', type: 'shorttext' },
        { name: 'Size', type: 'integer' },
      ]),
    })
  )
  const tables = await call('getBookTables', { ...base, includeFields: 'true' })
  const [companyName, companySize] = tables.bookTables.categories[0].fields.map(
    (field: any) => field.id
  )
  const contacts = ok(await call('createTable', { ...base, name: 'Contacts' }))
  const field = async (name: string, type: string, options: Record<string, unknown> = {}) => {
    const created = ok(
      await call('createField', {
        catId: contacts.catId,
        name,
        type,
        options: JSON.stringify(options),
      })
    )
    return created.fieldId as number
  }
  const name = await field('Name', 'shorttext')
  const company = await field('Company', 'link', { linkCatId: companies.catId, multiple: true })
  const sizes = await field('Sizes', 'lookup', { linkFieldId: company, targetFieldId: companySize })
  const total = await field('Total size', 'rollup', {
    linkFieldId: company,
    targetFieldId: companySize,
    rollup: 'sum',
  })
  const companyRow = async (label: string, size: number) => {
    const answer = ok(
      await call('createOrUpdateTableRow', {
        rowId: 'tmp1',
        catId: companies.catId,
        fieldValues: JSON.stringify({ [companyName]: label, [companySize]: String(size) }),
      })
    )
    return answer.newRows[0].id as number
  }
  const acme = await companyRow('Acme', 50)
  const globex = await companyRow('Globex', 7)
  const contact = ok(
    await call('createOrUpdateTableRow', {
      rowId: 'tmp1',
      catId: contacts.catId,
      fieldValues: JSON.stringify({ [name]: 'Ada', [company]: `${acme},${globex}` }),
    })
  )
  const contactId = contact.newRows[0].id as number
  const read = async () => {
    const answer = ok(
      await call('getTableValues', { catId: contacts.catId, format: 'diff_ready_rows' })
    )
    return answer.tableValues.rows[String(contactId)] as Record<string, any>
  }
  return {
    call,
    companies,
    contacts,
    acme,
    globex,
    contactId,
    read,
    f: { companyName, companySize, name, company, sizes, total },
  }
}

test.group('tables: recompute through the job queue', () => {
  test('a change in a linked row reaches captions, lookups and rollups through tables.recompute', async ({
    assert,
  }) => {
    const { call, contacts, acme, contactId, read, f } = await fixture()
    const before = await read()
    assert.equal(before[f.sizes], '50, 7')
    assert.strictEqual(before[f.total], 57)

    const events: RowsChanged[] = []
    const listener = (event: RowsChanged) => {
      events.push(event)
    }
    emitter.on('tables:rows_changed', listener)
    try {
      ok(
        await call('updateTableValue', { rowId: String(acme), fieldId: f.companySize, value: '60' })
      )
      ok(
        await call('updateTableValue', {
          rowId: String(acme),
          fieldId: f.companyName,
          value: 'Acme 2',
        })
      )
      await eventually(async () => {
        const row = await read()
        return row[f.sizes] === '60, 7' && row[f.total] === 67
      })
      // The caption of the link follows the renamed row (getTableValueSubset shows values only).
      const page = ok(await call('getTableValues', { catId: contacts.catId, format: 'rows' }))
      const cells = page.tableValues.rows[0].fields
      assert.equal(cells.Company.text, 'Acme 2, Globex')
      // The job announced the recomputed contact, as a change that triggers no webhook.
      await eventually(async () =>
        events.some(
          (event) => event.categoryId === contacts.catId && event.modified.includes(contactId)
        )
      )
      const recomputed = events.find((event) => event.categoryId === contacts.catId)!
      assert.isTrue(recomputed.bypassUrlTrigger)
      assert.deepEqual(recomputed.fieldIds, [])
      const write = events.find((event) => event.modified.includes(acme))!
      assert.isAbove(recomputed.stamp, write.stamp)
    } finally {
      emitter.off('tables:rows_changed', listener)
    }
  })

  test('deleting a linked row cuts the link now and recomputes the linking rows in a job', async ({
    assert,
  }) => {
    const { call, acme, globex, read, f } = await fixture()
    ok(await call('deleteTableRow', { rowId: String(globex) }))
    await eventually(async () => {
      const row = await read()
      return row[f.total] === 50
    })
    const row = await read()
    assert.deepEqual(row[f.company], [acme])
    assert.equal(row[f.sizes], '50')
  })

  test('the job is idempotent and ignores a deleted table', async ({ assert }) => {
    const { call, companies, contacts, acme, read, f } = await fixture()
    const again = await rowsService.runRecomputeJob({
      kind: 'dependents',
      categoryId: companies.catId,
      rowIds: [acme],
      columns: [],
      actorId: 0,
    })
    // Every column counts as changed (columns: []), but the data is current: nothing is written.
    assert.equal(again?.changed, 0)
    const row = await read()
    assert.equal(row[f.sizes], '50, 7')
    ok(await call('deleteTable', { catId: contacts.catId }))
    const gone = await rowsService.runRecomputeJob({
      kind: 'rows',
      categoryId: contacts.catId,
      rowIds: [1],
      columns: [],
      actorId: 0,
    })
    assert.isUndefined(gone)
  })
})
