import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import settings from '#core/settings/main'
import { ALL_ROWS, counterLockWait } from '../../services/row_counters.js'
import { RowSelection, countSplit } from '../../services/row_selection.js'
import { TableAccess } from '../../services/table_access.js'
import {
  addRows,
  caller,
  errorCode,
  eventually,
  makeBook,
  ok,
  ownerActor,
  type Call,
} from '../helpers/tables.js'

/**
 * Counts kept by triggers (services/row_counters.ts): a saved view's count and deep pages read
 * from them once a count or an offset passes tables.countersMinRows (5 here). Every answer is
 * compared with the same question asked so that no counter can answer it: the view's filters
 * sent as an unsaved group (counted by COUNT(*)), and the whole table read from offset 0.
 */
const STATUSES = ['won', 'lost', 'open']

async function fixture() {
  const book = await makeBook()
  const call = caller(book.session)
  const { catId } = ok(
    await call('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Deals', code: 'deals' })
  )
  const field = async (name: string, type: string, options: Record<string, unknown> = {}) =>
    ok(await call('createField', { catId, name, type, options: JSON.stringify(options) }))
      .fieldId as number
  const f = {
    name: await field('Name', 'shorttext'),
    status: await field('Status', 'enum', { values: STATUSES }),
    qty: await field('Qty', 'integer'),
  }
  const ids = await addRows(
    call,
    Array.from({ length: 40 }, (_, i) => ({
      [f.name]: `deal ${i} it's`,
      [f.status]: STATUSES[i % 3],
      [f.qty]: String(i),
    }))
  )
  const wonGroup = {
    operator: 'and',
    filters: [
      { field_id: f.status, filter_type: 'text', json: { predicate: 'is', operand: 'won' } },
    ],
  }
  const { viewId } = ok(
    await call('createView', { catId, name: 'Won', filterGroup: JSON.stringify(wonGroup) })
  )
  return { book, call, catId, f, ids, wonGroup, viewId: Number(viewId) }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

const count = async (call: Call, catId: number, applyViewFilters: unknown) =>
  ok(
    await call('computeTableOperation', {
      catId,
      operation: 'count',
      filterRowIds: JSON.stringify({ applyViewFilters }),
    })
  ).result as number

/** The saved view's count, and the same filters' count by a scan. */
const counts = async (fx: Fixture, group = fx.wonGroup) => ({
  kept: await count(fx.call, fx.catId, String(fx.viewId)),
  scanned: await count(fx.call, fx.catId, { filterGroup: group }),
})

const counterRow = (catId: number, counter: number) =>
  db.from('table_counters').where({ category_id: catId, counter }).first()

/** The row ids of a page (format rows). */
async function pageIds(call: Call, catId: number, params: Record<string, unknown>) {
  const answer = ok(await call('getTableValues', { catId, format: 'rows', ...params }))
  return answer.tableValues.rows.map((row: any) => Number(row.id)) as number[]
}

test.group('tables: counts kept by triggers', (group) => {
  let fx: Fixture
  group.setup(async () => {
    await settings.update('tables.countersMinRows', 5)
    fx = await fixture()
    return async () => {
      await settings.update('tables.countersMinRows', null)
    }
  })

  test('a saved view gets a counter once its count passes the setting', async ({ assert }) => {
    assert.deepEqual(await counts(fx), { kept: 14, scanned: 14 })
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)), 10_000, 'counter made')
    assert.deepEqual(await counts(fx), { kept: 14, scanned: 14 })
    // The count is the counter's: a bucket changed behind its back shows in the answer.
    const bucket = await db
      .from('table_counts')
      .where({ category_id: fx.catId, counter: fx.viewId })
      .first()
    assert.exists(bucket)
    await db
      .from('table_counts')
      .where({ category_id: fx.catId, counter: fx.viewId, bucket: bucket.bucket })
      .update({ n: Number(bucket.n) + 1000 })
    const tampered = await counts(fx)
    assert.equal(tampered.kept, 1014)
    await db
      .from('table_counts')
      .where({ category_id: fx.catId, counter: fx.viewId, bucket: bucket.bucket })
      .update({ n: bucket.n })
    const restored = await counts(fx)
    assert.equal(restored.kept, 14)
  })

  test('every write path keeps it: cell updates, bulk updates, inserts, deletes', async ({
    assert,
  }) => {
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)))
    const setCell = async (rowId: number, fieldId: number, value: string) =>
      ok(await fx.call('updateTableValue', { rowId: String(rowId), fieldId, value }))
    // won -> lost, lost -> won, open -> won, and a cell the filter does not read
    await setCell(fx.ids[0], fx.f.status, 'lost')
    await setCell(fx.ids[1], fx.f.status, 'won')
    await setCell(fx.ids[2], fx.f.status, 'won')
    await setCell(fx.ids[3], fx.f.qty, '99')
    assert.deepEqual(await counts(fx), { kept: 15, scanned: 15 })
    const rows = Object.fromEntries(
      fx.ids.slice(10, 20).map((id) => [String(id), { [fx.f.status]: 'won' }])
    )
    ok(await fx.call('createOrUpdateTableRows', { rows: JSON.stringify(rows) }))
    const afterBulk = await counts(fx)
    assert.equal(afterBulk.kept, afterBulk.scanned)
    const added = await addRows(fx.call, [
      { [fx.f.name]: 'new won', [fx.f.status]: 'won' },
      { [fx.f.name]: 'new open', [fx.f.status]: 'open' },
    ])
    assert.deepEqual(await counts(fx), { kept: afterBulk.kept + 1, scanned: afterBulk.kept + 1 })
    ok(await fx.call('deleteTableRows', { rows: `${added[0]},${fx.ids[1]},${fx.ids[5]}` }))
    const afterDelete = await counts(fx)
    assert.equal(afterDelete.kept, afterDelete.scanned)
    assert.equal(afterDelete.kept, afterBulk.kept - 1)
  })

  test('concurrent writers leave it exact', async ({ assert }) => {
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)))
    await Promise.all(
      Array.from({ length: 8 }, async (_, writer) => {
        for (let i = 0; i < 15; i++) {
          const id = fx.ids[20 + ((writer * 5 + i * 3) % 20)]
          const status = STATUSES[(writer + i) % 3]
          ok(
            await fx.call('updateTableValue', {
              rowId: String(id),
              fieldId: fx.f.status,
              value: status,
            })
          )
        }
      })
    )
    const after = await counts(fx)
    assert.equal(after.kept, after.scanned)
    // Bulk inserts side by side (each row's ord set by an UPDATE when another insert took the
    // ids it expected): the triggers of concurrent multi-row statements must not deadlock.
    const batches = await Promise.all(
      Array.from({ length: 6 }, (_, client) =>
        addRows(
          fx.call,
          Array.from({ length: 150 }, (__, i) => ({
            [fx.f.name]: `bulk ${client} ${i}`,
            [fx.f.status]: STATUSES[(client + i) % 3],
          }))
        )
      )
    )
    assert.lengthOf(batches.flat(), 900)
    const afterBulk = await counts(fx)
    assert.equal(afterBulk.kept, afterBulk.scanned)
    ok(await fx.call('deleteTableRows', { rows: batches.flat().join(',') }))
  })

  test('pages deep in the table and in the view match the pages of a full read', async ({
    assert,
  }) => {
    const all = await pageIds(fx.call, fx.catId, { maxRows: 1000 })
    const won = await pageIds(fx.call, fx.catId, {
      maxRows: 1000,
      filterRowIds: JSON.stringify({ applyViewFilters: { filterGroup: fx.wonGroup } }),
    })
    assert.isAbove(won.length, 6)
    // The first deep page makes the table's counter (the view's exists already).
    await pageIds(fx.call, fx.catId, { offset: 7, maxRows: 3 })
    await eventually(async () => !!(await counterRow(fx.catId, ALL_ROWS)), 10_000, 'counter made')
    for (let offset = 5; offset <= all.length + 2; offset += 4)
      assert.deepEqual(
        await pageIds(fx.call, fx.catId, { offset, maxRows: 3 }),
        all.slice(offset, offset + 3),
        `table offset ${offset}`
      )
    for (let offset = 5; offset <= won.length + 1; offset += 1)
      assert.deepEqual(
        await pageIds(fx.call, fx.catId, {
          offset,
          maxRows: 2,
          filterRowIds: JSON.stringify({ applyViewFilters: String(fx.viewId) }),
        }),
        won.slice(offset, offset + 2),
        `view offset ${offset}`
      )
    // The pages are the counter's: two rows counted behind its back, in a bucket before the
    // table's first, move every deep page two rows back.
    const [first] = await db
      .from('table_counts')
      .where({ category_id: fx.catId, counter: ALL_ROWS })
      .orderBy('bucket')
      .limit(1)
    assert.exists(first)
    const fake = { category_id: fx.catId, counter: ALL_ROWS, bucket: Number(first.bucket) - 1 }
    await db.table('table_counts').insert({ ...fake, n: 2 })
    try {
      assert.deepEqual(
        await pageIds(fx.call, fx.catId, { offset: 9, maxRows: 3 }),
        all.slice(7, 10)
      )
    } finally {
      await db.from('table_counts').where(fake).delete()
    }
    assert.deepEqual(await pageIds(fx.call, fx.catId, { offset: 9, maxRows: 3 }), all.slice(9, 12))
    // A page past the counter's last row is empty at once: a counter that holds no rows, by a
    // bucket of minus all of them, answers an empty page where the rows are.
    await db.table('table_counts').insert({ ...fake, n: -all.length })
    try {
      assert.deepEqual(await pageIds(fx.call, fx.catId, { offset: 9, maxRows: 3 }), [])
    } finally {
      await db.from('table_counts').where(fake).delete()
    }
    assert.deepEqual(await pageIds(fx.call, fx.catId, { offset: 9, maxRows: 3 }), all.slice(9, 12))
  })

  test("a selection narrowed after it was made, or excluding rows, is not the counter's", async ({
    assert,
  }) => {
    await pageIds(fx.call, fx.catId, { offset: 7, maxRows: 3 })
    await eventually(async () => !!(await counterRow(fx.catId, ALL_ROWS)))
    const all = await pageIds(fx.call, fx.catId, { maxRows: 1000 })
    const rowSelection = await app.container.make(RowSelection)
    const access = await app.container.make(TableAccess)
    const actor = ownerActor(fx.book)
    const scope = await access.forCategory(actor, fx.catId, 'read')
    const narrowed = await rowSelection.selection(scope, actor, undefined)
    narrowed.where.push({ sql: 't.id > ?', bindings: [all[9]] })
    assert.equal(await rowSelection.count(scope.category, narrowed), all.length - 10)
    const page = await rowSelection.selectRows(scope.category, narrowed, { offset: 6, limit: 3 })
    assert.deepEqual(
      page.map((row) => Number(row.id)),
      all.slice(16, 19)
    )
    const excluded = all.slice(0, 4).join(',')
    assert.deepEqual(
      await pageIds(fx.call, fx.catId, { offset: 6, maxRows: 3, filterRowIds: `!${excluded}` }),
      all.slice(10, 13)
    )
    const withoutFour = ok(
      await fx.call('computeTableOperation', {
        catId: fx.catId,
        operation: 'count',
        filterRowIds: `!${excluded}`,
      })
    )
    assert.equal(withoutFour.result, all.length - 4)
  })

  test('changed view filters drop the counter; the next count is the new filters', async ({
    assert,
  }) => {
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)))
    const lostGroup = {
      operator: 'and',
      filters: [
        { field_id: fx.f.status, filter_type: 'text', json: { predicate: 'is', operand: 'lost' } },
      ],
    }
    ok(await fx.call('updateView', { viewId: fx.viewId, filterGroup: JSON.stringify(lostGroup) }))
    assert.notExists(await counterRow(fx.catId, fx.viewId))
    const after = await counts(fx, lostGroup)
    assert.equal(after.kept, after.scanned)
    await eventually(async () => {
      const row = await counterRow(fx.catId, fx.viewId)
      return Boolean(row?.signature.includes('lost'))
    })
    assert.deepEqual(await counts(fx, lostGroup), after)
    ok(await fx.call('updateView', { viewId: fx.viewId, filterGroup: JSON.stringify(fx.wonGroup) }))
  })
})

test.group('tables: counters and the table structure', (group) => {
  group.each.setup(async () => {
    await settings.update('tables.countersMinRows', 5)
    return async () => {
      await settings.update('tables.countersMinRows', null)
    }
  })

  test('deleting the field a counter reads drops the counter; writes go on', async ({ assert }) => {
    const fx = await fixture()
    await counts(fx)
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)))
    ok(await fx.call('deleteField', { fieldId: fx.f.status }))
    assert.notExists(await counterRow(fx.catId, fx.viewId))
    const added = await addRows(fx.call, [{ [fx.f.name]: 'after', [fx.f.qty]: '1' }])
    ok(
      await fx.call('updateTableValue', { rowId: String(added[0]), fieldId: fx.f.qty, value: '2' })
    )
    ok(await fx.call('deleteTableRows', { rows: String(added[0]) }))
  })

  test("MariaDB: a field whose counter's lock stays busy is not deleted", async ({
    assert,
    cleanup,
  }) => {
    const fx = await fixture()
    await counts(fx)
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)))
    // Another connection holds the counter's lock (as an install or a fold of another process).
    const holder = await db.connection().transaction()
    const lock = `quire_counter_${fx.catId}_${fx.viewId}`
    await holder.rawQuery('SELECT GET_LOCK(?, 0)', [lock])
    const wait = counterLockWait.forgetSeconds
    counterLockWait.forgetSeconds = 1
    cleanup(async () => {
      counterLockWait.forgetSeconds = wait
      await holder.rollback()
    })
    assert.equal(await errorCode(fx.call('deleteField', { fieldId: fx.f.status })), 'DEADLOCK')
    // Nothing changed: the field, its counter and its writes are there.
    assert.exists(await db.from('table_fields').where('id', fx.f.status).first())
    const lost = { rowId: String(fx.ids[1]), fieldId: fx.f.status, value: 'won' }
    ok(await fx.call('updateTableValue', lost))
    assert.deepEqual(await counts(fx), { kept: 15, scanned: 15 })
    await holder.rawQuery('SELECT RELEASE_LOCK(?)', [lock])
    ok(await fx.call('deleteField', { fieldId: fx.f.status }))
    assert.notExists(await counterRow(fx.catId, fx.viewId))
  }).skip(
    process.env.DB_CONNECTION !== 'mysql',
    "needs MariaDB (DB_CONNECTION=mysql): SQLite's counters are dropped under its write lock"
  )

  test('deleting a view or its table drops their counters', async ({ assert }) => {
    const fx = await fixture()
    await counts(fx)
    await pageIds(fx.call, fx.catId, { offset: 10, maxRows: 2 })
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)))
    await eventually(async () => !!(await counterRow(fx.catId, ALL_ROWS)))
    ok(await fx.call('deleteView', { viewId: fx.viewId }))
    assert.notExists(await counterRow(fx.catId, fx.viewId))
    ok(await fx.call('deleteTable', { catId: fx.catId }))
    for (const table of ['table_counters', 'table_counts', 'table_count_log'])
      assert.lengthOf(await db.from(table).where('category_id', fx.catId), 0, table)
  })

  test('filters that depend on the reader or the day get no counter', async ({ assert }) => {
    const fx = await fixture()
    const { catId } = fx
    const day = ok(
      await fx.call('createField', { catId, name: 'Day', type: 'date', options: '{}' })
    ).fieldId
    const today = {
      operator: 'and',
      filters: [
        { field_id: day, filter_type: 'text', json: { predicate: 'is', operand: 'today' } },
      ],
    }
    const { viewId } = ok(
      await fx.call('createView', { catId, name: 'Today', filterGroup: JSON.stringify(today) })
    )
    for (let i = 0; i < 3; i++) assert.equal(await count(fx.call, catId, String(viewId)), 0)
    // A bigger table's count would have made one by now if it were allowed (see the first group).
    await counts(fx)
    await eventually(async () => !!(await counterRow(catId, fx.viewId)))
    assert.notExists(await counterRow(catId, Number(viewId)))
  })

  test('MariaDB: a count read as id ranges at once answers the one COUNT(*)', async ({
    assert,
    cleanup,
  }) => {
    const fx = await fixture()
    const saved = { ...countSplit }
    cleanup(() => {
      Object.assign(countSplit, saved)
    })
    const direct = async (where: string) => {
      const [rows] = await db.rawQuery(
        `SELECT COUNT(*) AS n FROM \`tt_${fx.catId}\` t WHERE ${where}`
      )
      return Number(rows[0].n)
    }
    const qtyOver = {
      operator: 'and',
      filters: [
        { field_id: fx.f.qty, filter_type: 'text', json: { predicate: 'gt', operand: '10' } },
      ],
    }
    // The parts are separate statements (MariaDB's own count of them).
    const selects = async () => {
      const [rows] = await db.rawQuery("SHOW GLOBAL STATUS LIKE 'Com_select'")
      return Number(rows[0].Value)
    }
    Object.assign(countSplit, { minIds: 1, parts: 7 })
    const before = await selects()
    await count(fx.call, fx.catId, { filterGroup: qtyOver })
    assert.isAtLeast((await selects()) - before, 7)
    for (const parts of [2, 3, 7, 64]) {
      Object.assign(countSplit, { minIds: 1, parts })
      assert.equal(await count(fx.call, fx.catId, { filterGroup: qtyOver }), 29, `${parts} parts`)
      assert.equal(await count(fx.call, fx.catId, { filterGroup: fx.wonGroup }), 14)
      assert.equal(
        await count(fx.call, fx.catId, { filterGroup: { operator: 'and', filters: [] } }),
        await direct('1 = 1')
      )
    }
  }).skip(
    process.env.DB_CONNECTION !== 'mysql',
    'needs MariaDB (DB_CONNECTION=mysql): SQLite counts in one statement'
  )

  test('MariaDB: a long log of deltas is folded into the counts', async ({ assert }) => {
    const fx = await fixture()
    await counts(fx)
    await eventually(async () => !!(await counterRow(fx.catId, fx.viewId)))
    const flip = async (status: string) => {
      const rows = Object.fromEntries(fx.ids.map((id) => [String(id), { [fx.f.status]: status }]))
      ok(await fx.call('createOrUpdateTableRows', { rows: JSON.stringify(rows) }))
    }
    for (let i = 0; i < 110; i++) await flip(i % 2 ? 'won' : 'lost')
    const logged = async () => {
      const [row] = await db
        .from('table_count_log')
        .where({ category_id: fx.catId, counter: fx.viewId })
        .count('* as n')
      return Number(row.n)
    }
    assert.isAbove(await logged(), 2000)
    assert.deepEqual(await counts(fx), { kept: 40, scanned: 40 })
    await eventually(async () => (await logged()) === 0, 10_000, 'log folded')
    assert.deepEqual(await counts(fx), { kept: 40, scanned: 40 })
  }).skip(
    process.env.DB_CONNECTION !== 'mysql',
    'needs MariaDB (DB_CONNECTION=mysql): on SQLite the triggers write the counts themselves'
  )
})
