import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { RecomputeService } from '#plugins/tables/services/recompute_service'
import { caller, eventually, makeBook, ok, rowsChangedEvents } from '../helpers/tables.js'

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
  /** The caption of the contact's link (the rows format carries it). */
  const caption = async () => {
    const answer = ok(await call('getTableValues', { catId: contacts.catId, format: 'rows' }))
    return answer.tableValues.rows[0].fields.Company.text as string
  }
  return {
    call,
    caption,
    companies,
    contacts,
    acme,
    globex,
    contactId,
    read,
    f: { companyName, companySize, name, company, sizes, total },
  }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

/** Polls the contact's row until `probe` holds; answers that row. */
async function contactOnceItShows(fx: Fixture, probe: (row: Record<string, any>) => boolean) {
  let row: Record<string, any> = {}
  await eventually(async () => {
    row = await fx.read()
    return probe(row)
  })
  return row
}

test.group('tables: recompute through the job queue', () => {
  test('the fixture: the contact shows both companies in its lookup and rollup', async ({
    assert,
  }) => {
    const fx = await fixture()
    const row = await fx.read()
    assert.equal(row[fx.f.sizes], '50, 7')
    assert.strictEqual(row[fx.f.total], 57)
    assert.equal(await fx.caption(), 'Acme, Globex')
  })

  test('a changed size in a linked row reaches the lookup and the rollup of the linking row', async ({
    assert,
  }) => {
    const fx = await fixture()
    ok(
      await fx.call('updateTableValue', {
        rowId: String(fx.acme),
        fieldId: fx.f.companySize,
        value: '60',
      })
    )
    const row = await contactOnceItShows(fx, (shown) => shown[fx.f.total] === 67)
    assert.equal(row[fx.f.sizes], '60, 7')
  })

  test("a renamed linked row reaches the linking row's caption", async ({ assert }) => {
    const fx = await fixture()
    ok(
      await fx.call('updateTableValue', {
        rowId: String(fx.acme),
        fieldId: fx.f.companyName,
        value: 'Acme 2',
      })
    )
    // Waits for this caption itself: the job of an earlier write may land first.
    let caption = ''
    await eventually(async () => {
      caption = await fx.caption()
      return caption === 'Acme 2, Globex'
    })
    assert.equal(caption, 'Acme 2, Globex')
  })

  test('the job announces the recomputed row after the write, as a change that triggers no webhook', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { events, stop } = rowsChangedEvents()
    try {
      ok(
        await fx.call('updateTableValue', {
          rowId: String(fx.acme),
          fieldId: fx.f.companySize,
          value: '60',
        })
      )
      await eventually(async () =>
        events.some(
          (event) => event.categoryId === fx.contacts.catId && event.modified.includes(fx.contactId)
        )
      )
    } finally {
      stop()
    }
    const recomputed = events.find((event) => event.categoryId === fx.contacts.catId)!
    assert.isTrue(recomputed.bypassUrlTrigger)
    assert.deepEqual(recomputed.fieldIds, [])
    const write = events.find((event) => event.modified.includes(fx.acme))!
    assert.isAbove(recomputed.stamp, write.stamp)
  })

  test('deleting a linked row cuts the link at once and recomputes the linking row in a job', async ({
    assert,
  }) => {
    const fx = await fixture()
    ok(await fx.call('deleteTableRow', { rowId: String(fx.globex) }))
    const row = await contactOnceItShows(fx, (shown) => shown[fx.f.total] === 50)
    assert.deepEqual(row[fx.f.company], [fx.acme])
    assert.equal(row[fx.f.sizes], '50')
  })

  test('the job is idempotent: run again on current data, it writes nothing', async ({
    assert,
  }) => {
    const fx = await fixture()
    const recompute = await app.container.make(RecomputeService)
    const again = await recompute.runJob({
      kind: 'dependents',
      categoryId: fx.companies.catId,
      rowIds: [fx.acme],
      columns: [],
      actorId: 0,
    })
    // Every column counts as changed (columns: []), but the data is current.
    assert.equal(again?.changed, 0)
    const row = await fx.read()
    assert.equal(row[fx.f.sizes], '50, 7')
  })

  test('the job of a deleted table does nothing', async ({ assert }) => {
    const fx = await fixture()
    ok(await fx.call('deleteTable', { catId: fx.contacts.catId }))
    const recompute = await app.container.make(RecomputeService)
    const gone = await recompute.runJob({
      kind: 'rows',
      categoryId: fx.contacts.catId,
      rowIds: [1],
      columns: [],
      actorId: 0,
    })
    assert.isUndefined(gone)
  })
})
