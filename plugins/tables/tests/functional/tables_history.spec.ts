import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { login } from '#tests/helpers/users'
import { attached, ensureSocketEndpoint } from '#tests/functional/socket/socket_client'
import { HistoryService, unpackEntries } from '../../services/history_service.js'
import { caller, errorCode, eventually, makeBook, ok, rowsOf } from '../helpers/tables.js'

/** A book (owner, a writer, a reader) with a table: Name, Qty, Log (activity); rows A and B by one bulk write. */
async function fixture() {
  const book = await makeBook([{ right: 2 }, { right: 1 }])
  const owner = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const table = ok(
    await owner('createTable', {
      ...base,
      name: 'History',
      code: 'hist',
      fields: JSON.stringify([
        { name: 'Name', type: 'shorttext' },
        { name: 'Qty', type: 'integer' },
        { name: 'Log', type: 'activity' },
      ]),
    })
  )
  const catId = table.catId as number
  const defs = ok(
    await owner('getBookTables', { ...base, includeFields: 'true' })
  ).bookTables.categories.find((category: any) => category.id === catId).fields
  const id = (name: string) => defs.find((field: any) => field.name === name).id as number
  const f = { name: id('Name'), qty: id('Qty'), log: id('Log') }
  const created = ok(
    await owner('createOrUpdateTableRows', {
      b_o: book.b_o,
      rows: JSON.stringify({ tmpA: { [f.name]: 'a', [f.qty]: 1 }, tmpB: { [f.name]: 'b' } }),
    })
  )
  const [a, b] = created.newRows.map((row: any) => row.id as number)
  return { book, owner, catId, f, a, b, base }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

const history = async (fx: Fixture, rowId: number, extra: Record<string, unknown> = {}) =>
  ok(await fx.owner('getRowHistory', { b_o: fx.book.b_o, rowId: String(rowId), ...extra }))

const changesOf = (fx: Fixture, rowId: number, extra: Record<string, unknown> = {}) =>
  history(fx, rowId, extra).then((answer) => answer.changes)

const totalOf = (fx: Fixture, rowId: number) => history(fx, rowId).then((answer) => answer.total)

const rowOf = (fx: Fixture, rowId: number) => rowsOf(fx.owner, fx.catId).then((rows) => rows[rowId])

const set = async (fx: Fixture, rowId: number, fieldId: number, value: unknown) =>
  ok(await fx.owner('updateTableValue', { rowId: String(rowId), fieldId, value }))

test.group('tables: cell history', () => {
  test('api.php writes are recorded with who, when, stamp, old and new value and the operation', async ({
    assert,
  }) => {
    const fx = await fixture()
    await set(fx, fx.a, fx.f.name, 'a2')
    ok(
      await fx.owner('createOrUpdateTableRow', {
        rowId: String(fx.a),
        fieldValues: JSON.stringify({ [fx.f.qty]: 5 }),
      })
    )
    const answer = await history(fx, fx.a)
    assert.equal(answer.total, 4) // created: Name, Qty; then Name, Qty
    const [qty, name, ...created] = answer.changes
    assert.include(qty, { fieldId: fx.f.qty, action: 'update', old: 1, new: 5 })
    assert.equal(qty.operation, 'createOrUpdateTableRow')
    assert.include(name, { fieldId: fx.f.name, old: 'a', new: 'a2', operation: 'updateTableValue' })
    assert.deepEqual(name.u.c, fx.book.owner.code)
    assert.isAbove(name.s, 0)
    assert.isAtLeast(name.c, Math.floor(Date.now() / 1000) - 60)
    assert.isNull(name.onBehalfOf)
    assert.match(name.m, /changed Name$/)
    assert.deepEqual(
      created.map((change: any) => [change.action, change.operation, change.new]),
      [
        ['create', 'createOrUpdateTableRows', 1],
        ['create', 'createOrUpdateTableRows', 'a'],
      ]
    )
    // The stamp is the write's: the row carries it.
    const stored = await db.from(`tt_${fx.catId}`).where('id', fx.a).first()
    assert.equal(qty.s, Number(stored.sstamp))
    // Both rows of the bulk write share its write id.
    const rowB = await history(fx, fx.b)
    assert.equal(rowB.changes[0].mid, created[0].mid)
    assert.notEqual(name.mid, created[0].mid)
  })

  test('a delete records the old values; an unchanged value records nothing', async ({
    assert,
  }) => {
    const fx = await fixture()
    await set(fx, fx.b, fx.f.name, 'b')
    assert.equal(await totalOf(fx, fx.b), 1)
    ok(await fx.owner('deleteTableRow', { rowId: String(fx.b) }))
    const entries = await db
      .from('table_cell_history')
      .where('row_id', fx.b)
      .where('action', 'delete')
    assert.deepEqual(
      entries.map((entry) => [entry.operation, JSON.parse(entry.old_value), entry.new_value]),
      [['deleteTableRow', 'b', 'null']]
    )
  })

  test('socket type 13 writes are recorded as socket:13', async ({ assert, cleanup }) => {
    const fx = await fixture()
    await ensureSocketEndpoint()
    const socket = await attached(fx.book.session)
    cleanup(async () => {
      await socket.close()
    })
    socket.send({ type: 13, rowId: String(fx.a), fieldId: fx.f.name, value: 'by socket' })
    await eventually(async () => (await totalOf(fx, fx.a)) === 3)
    const [change] = await changesOf(fx, fx.a)
    assert.include(change, { operation: 'socket:13', old: 'a', new: 'by socket' })
  })

  test('activity cells: {last, total} with text = last.m in every read format', async ({
    assert,
  }) => {
    const fx = await fixture()
    await set(fx, fx.a, fx.f.qty, 7)
    const [last] = await changesOf(fx, fx.a)
    const expected = {
      last: {
        id: last.id,
        m: last.m,
        mid: last.mid,
        action: 'update',
        c: last.c,
        s: last.s,
        u: last.u,
      },
      total: 3,
    }
    assert.containsSubset(last.u, { c: fx.book.owner.code })
    const columns = ok(await fx.owner('getTableValues', { catId: fx.catId }))
    const logColumn = columns.tableValues.fields.find((field: any) => field.id === fx.f.log)
    const cellA = logColumn.values.find((cell: any) => cell.id === fx.a)
    assert.deepEqual(cellA, { id: fx.a, value: expected, text: last.m })
    const rows = ok(await fx.owner('getTableValues', { catId: fx.catId, format: 'rows' }))
    const rowA = rows.tableValues.rows.find((row: any) => row.id === fx.a)
    assert.deepEqual(rowA.fields.Log, { value: expected, text: last.m })
    const named = ok(
      await fx.owner('getNamedTableValues', { ...fx.base, catCode: 'hist', format: 'rows' })
    )
    assert.deepEqual(
      named.tableValues.rows.find((row: any) => row.id === fx.a).fields.Log.value,
      expected
    )
    const tableRows = ok(await fx.owner('getTableRows', { catId: fx.catId }))
    assert.deepEqual(tableRows.rows.find((row: any) => row.id === fx.a).fields.Log.value, expected)
    // Row B: its one created cell.
    const rowB = await rowOf(fx, fx.b)
    assert.equal(rowB[fx.f.log].total, 1)
  })

  test('getRowHistory pages newest first and filters by fieldId', async ({ assert }) => {
    const fx = await fixture()
    for (const value of ['x1', 'x2', 'x3']) await set(fx, fx.a, fx.f.name, value)
    const first = await history(fx, fx.a, { nbMax: 2, page: 1 })
    const second = await history(fx, fx.a, { nbMax: 2, page: 2 })
    const third = await history(fx, fx.a, { nbMax: 2, page: 3 })
    assert.equal(first.total, 5)
    assert.deepEqual(
      [...first.changes, ...second.changes, ...third.changes].map((change: any) => change.new),
      ['x3', 'x2', 'x1', 1, 'a']
    )
    const ids = [...first.changes, ...second.changes].map((change: any) => change.id)
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x)
    )
    const onlyQty = await history(fx, fx.a, { fieldId: fx.f.qty })
    assert.equal(onlyQty.total, 1)
    assert.deepEqual(
      onlyQty.changes.map((change: any) => change.fieldId),
      [fx.f.qty]
    )
  })

  test('a bulk write stores its entries in write order, every column its own', async ({
    assert,
  }) => {
    const fx = await fixture()
    // Updates and creations mixed (actions and old values differ), then 1,200 entries (two statements).
    const mixed = ok(
      await fx.owner('createOrUpdateTableRows', {
        b_o: fx.book.b_o,
        rows: JSON.stringify({
          [fx.a]: { [fx.f.name]: 'a2', [fx.f.qty]: '' },
          tmpC: { [fx.f.name]: 'c', [fx.f.qty]: 7 },
          [fx.b]: { [fx.f.qty]: 2 },
        }),
      })
    )
    const c = mixed.newRows[0].id as number
    const rows: Record<string, Record<number, unknown>> = {}
    for (let i = 0; i < 600; i++) rows[`tmp${i}`] = { [fx.f.name]: `n${i}`, [fx.f.qty]: i }
    const bulk = ok(
      await fx.owner('createOrUpdateTableRows', { b_o: fx.book.b_o, rows: JSON.stringify(rows) })
    )
    const storedEntries = await db
      .from('table_cell_history')
      .where('category_id', fx.catId)
      .whereIn('operation', ['createOrUpdateTableRows'])
      .orderBy('id')
    const entries = storedEntries.flatMap(unpackEntries)
    // On SQLite a created row's entries are stored as one: the fixture's A, the mixed write's C,
    // the 600 rows.
    const packed = db.connection().dialect.name !== 'mysql'
    assert.lengthOf(storedEntries, packed ? 2 + 4 + 600 : 3 + 5 + 1200)
    assert.deepEqual(
      entries.map((entry) => Number(entry.id)),
      entries.map((_, i) => Number(entries[0].id) + i)
    )
    const columns = (entry: any) => [
      Number(entry.row_id),
      Number(entry.field_id),
      entry.field_type,
      entry.action,
      entry.old_value,
      entry.new_value,
    ]
    // The fixture's write (A, B), then the mixed one, then the 600 rows.
    const written = entries.slice(3)
    assert.deepEqual(written.slice(0, 5).map(columns), [
      [fx.a, fx.f.name, 'shorttext', 'update', '"a"', '"a2"'],
      [fx.a, fx.f.qty, 'integer', 'update', '1', 'null'],
      [c, fx.f.name, 'shorttext', 'create', 'null', '"c"'],
      [c, fx.f.qty, 'integer', 'create', 'null', '7'],
      [fx.b, fx.f.qty, 'integer', 'update', 'null', '2'],
    ])
    const ids = bulk.newRows.map((row: any) => row.id as number)
    assert.deepEqual(
      written.slice(5).map(columns),
      ids.flatMap((id: number, i: number) => [
        [id, fx.f.name, 'shorttext', 'create', 'null', `"n${i}"`],
        [id, fx.f.qty, 'integer', 'create', 'null', String(i)],
      ])
    )
    // Shared by every entry of one write, and told apart between writes.
    const stored = await db.from(`tt_${fx.catId}`).where('id', c).first()
    for (const entry of written.slice(0, 5)) {
      assert.equal(entry.write_id, written[0].write_id)
      assert.equal(Number(entry.sstamp), Number(stored.sstamp))
      assert.equal(entry.user_code, fx.book.owner.code)
      assert.isNull(entry.principal_code)
    }
    assert.notEqual(written[5].write_id, written[0].write_id)
    assert.lengthOf(new Set(written.slice(5).map((entry) => entry.write_id)), 1)
  })

  test('a created row packed in storage answers its entries one by one: pages, fieldId, activity, rollback', async ({
    assert,
  }) => {
    const fx = await fixture()
    const created = ok(
      await fx.owner('createOrUpdateTableRows', {
        b_o: fx.book.b_o,
        rows: JSON.stringify({
          tmpC: { [fx.f.name]: 'c', [fx.f.qty]: 3 },
          tmpD: { [fx.f.name]: 'd', [fx.f.qty]: 4 },
        }),
      })
    )
    const [c, d] = created.newRows.map((row: any) => row.id as number)
    for (const value of ['c1', 'c2']) await set(fx, c, fx.f.name, value)
    await set(fx, c, fx.f.qty, 30)
    const all = await history(fx, c, { nbMax: 500 })
    assert.equal(all.total, 5)
    assert.deepEqual(
      all.changes.map((change: any) => [change.fieldId, change.action, change.old, change.new]),
      [
        [fx.f.qty, 'update', 3, 30],
        [fx.f.name, 'update', 'c1', 'c2'],
        [fx.f.name, 'update', 'c', 'c1'],
        [fx.f.qty, 'create', null, 3],
        [fx.f.name, 'create', null, 'c'],
      ]
    )
    const ids = all.changes.map((change: any) => change.id)
    // The creation's two entries have ids of their own, one after the other, between D's and the updates'.
    assert.equal(ids[3], ids[4] + 1)
    const rowD = await history(fx, d)
    assert.deepEqual(
      rowD.changes.map((change: any) => change.id),
      [ids[3] + 2, ids[3] + 1]
    )
    assert.isBelow(ids[3] + 2, ids[2])
    for (const change of all.changes.slice(3)) {
      assert.equal(change.fieldType, change.fieldId === fx.f.qty ? 'integer' : 'shorttext')
      assert.equal(change.operation, 'createOrUpdateTableRows')
      assert.equal(change.mid, rowD.changes[0].mid)
      assert.match(change.m, /set (Name|Qty)$/)
    }
    // Every page size and page, with and without a field: the same entries as the whole list.
    for (const nbMax of [1, 2, 3, 4]) {
      const pages = []
      for (let page = 1; page <= Math.ceil(5 / nbMax) + 1; page++) {
        const answer = await history(fx, c, { nbMax, page })
        assert.equal(answer.total, 5)
        pages.push(...answer.changes.map((change: any) => change.id))
      }
      assert.deepEqual(pages, ids, `nbMax ${nbMax}`)
    }
    for (const [fieldId, expected] of [
      [fx.f.name, [ids[1], ids[2], ids[4]]],
      [fx.f.qty, [ids[0], ids[3]]],
    ] as const) {
      const one = await history(fx, c, { fieldId })
      assert.equal(one.total, expected.length)
      assert.deepEqual(
        one.changes.map((change: any) => change.id),
        [...expected]
      )
      const paged = []
      for (let page = 1; page <= expected.length + 1; page++) {
        const changes = await changesOf(fx, c, { fieldId, nbMax: 1, page })
        paged.push(...changes.map((change: any) => change.id))
      }
      assert.deepEqual(paged, [...expected])
    }
    // A field a packed creation holds no entry of: only its own entries, on every page.
    const note = ok(
      await fx.owner('createField', {
        b_o: fx.book.b_o,
        catId: fx.catId,
        name: 'Note',
        type: 'shorttext',
      })
    ).fieldId as number
    for (const value of ['n1', 'n2', 'n3']) await set(fx, c, note, value)
    const notes = await history(fx, c, { fieldId: note })
    assert.equal(notes.total, 3)
    const noteIds = notes.changes.map((change: any) => change.id)
    for (const nbMax of [1, 2]) {
      const paged = []
      for (let page = 1; page <= 4; page++) {
        const changes = await changesOf(fx, c, { fieldId: note, nbMax, page })
        paged.push(...changes.map((change: any) => change.id))
      }
      assert.deepEqual(paged, noteIds)
    }
    const withNotes = await history(fx, c, { nbMax: 3, page: 2 })
    assert.equal(withNotes.total, 8)
    assert.deepEqual(
      withNotes.changes.map((change: any) => change.id),
      ids.slice(0, 3)
    )

    // Activity: D's last entry is its creation's last (Qty), its total both.
    const cells = await rowOf(fx, d)
    const cell = cells[fx.f.log]
    assert.equal(cell.total, 2)
    assert.equal(cell.last.id, ids[3] + 2)
    assert.match(cell.last.m, /set Qty$/)
    // A rollback from either created entry reaches the creation; another row's id is not this row's.
    for (const changeId of [ids[3], ids[4]])
      assert.equal(
        await errorCode(
          fx.owner('rollBackBeforeChange', { b_o: fx.book.b_o, rowId: String(c), changeId })
        ),
        'CONFLICT'
      )
    assert.equal(
      await errorCode(
        fx.owner('rollBackBeforeChange', {
          b_o: fx.book.b_o,
          rowId: String(c),
          changeId: ids[3] + 1,
        })
      ),
      'NOT_FOUND'
    )
    // From an update on, the row goes back to before it.
    ok(
      await fx.owner('rollBackBeforeChange', {
        b_o: fx.book.b_o,
        rowId: String(c),
        changeId: ids[2],
      })
    )
    const rolledBack = await rowOf(fx, c)
    assert.equal(rolledBack[fx.f.name], 'c')
  })

  test('retention keeps the newest entries of each table', async ({ assert }) => {
    const fx = await fixture()
    for (const value of ['r1', 'r2', 'r3']) await set(fx, fx.a, fx.f.name, value)
    const service = await app.container.make(HistoryService)
    await service.prune({ maxPerTable: 2, days: 0 })
    const kept = await history(fx, fx.a)
    assert.equal(kept.total, 2)
    assert.deepEqual(
      kept.changes.map((change: any) => change.new),
      ['r3', 'r2']
    )
  })

  test('retention counts entries, not stored rows: a created row keeps its newest cells', async ({
    assert,
  }) => {
    const fx = await fixture()
    const created = ok(
      await fx.owner('createOrUpdateTableRows', {
        b_o: fx.book.b_o,
        rows: JSON.stringify({ tmpC: { [fx.f.name]: 'c', [fx.f.qty]: 3 } }),
      })
    )
    const c = created.newRows[0].id as number
    const before = await history(fx, fx.a)
    const service = await app.container.make(HistoryService)
    // A's Qty, B's Name, C's Name and Qty are kept: A's creation loses its older entry only.
    // (Every table is pruned: the counts answered include other tests' tables.)
    assert.isAtLeast(await service.prune({ maxPerTable: 4, days: 0 }), 1)
    const rowA = await history(fx, fx.a)
    assert.equal(rowA.total, 1)
    assert.deepEqual(rowA.changes, before.changes.slice(0, 1))
    const cellsOfA = await rowOf(fx, fx.a)
    assert.equal(cellsOfA[fx.f.log].total, 1)
    assert.equal(await service.prune({ maxPerTable: 4, days: 0 }), 0)
    // Down to C's Qty.
    assert.isAtLeast(await service.prune({ maxPerTable: 1, days: 0 }), 3)
    const rowC = await history(fx, c)
    assert.deepEqual(
      rowC.changes.map((change: any) => [change.fieldId, change.new]),
      [[fx.f.qty, 3]]
    )
    assert.equal(rowC.total, 1)
    assert.equal(await totalOf(fx, fx.a), 0)
  })

  test('retention finds the edge past the first 1,000 stored rows, newest first', async ({
    assert,
  }) => {
    const fx = await fixture()
    // 1,500 created rows of 2 entries each after A's 2 and B's 1: 3,003 entries.
    const rows: Record<string, Record<number, unknown>> = {}
    for (let i = 0; i < 1500; i++) rows[`tmp${i}`] = { [fx.f.name]: `n${i}`, [fx.f.qty]: i }
    const created = ok(
      await fx.owner('createOrUpdateTableRows', { b_o: fx.book.b_o, rows: JSON.stringify(rows) })
    )
    const idOf = (i: number) =>
      created.newRows.find((row: any) => row.tmpId === `tmp${i}`).id as number
    const service = await app.container.make(HistoryService)
    // The newest 2,001: rows 500 to 1,499 whole, and row 499's newest cell (its Qty).
    assert.isAtLeast(await service.prune({ maxPerTable: 2001, days: 0 }), 1002)
    const [left] = await db
      .from('table_cell_history')
      .where('category_id', fx.catId)
      .sum('entry_count as n')
    assert.equal(Number(left.n), 2001)
    assert.equal(await totalOf(fx, fx.a), 0)
    assert.equal(await totalOf(fx, idOf(498)), 0)
    const edge = await history(fx, idOf(499))
    assert.deepEqual(
      edge.changes.map((change: any) => [change.fieldId, change.new]),
      [[fx.f.qty, 499]]
    )
    assert.equal(await totalOf(fx, idOf(500)), 2)
    assert.equal(await service.prune({ maxPerTable: 2001, days: 0 }), 0)
  })

  test('retention by age removes the entries older than the days kept, and only those', async ({
    assert,
  }) => {
    const fx = await fixture()
    for (const value of ['d1', 'd2', 'd3']) await set(fx, fx.a, fx.f.name, value)
    const entries = await db
      .from('table_cell_history')
      .where('row_id', fx.a)
      .orderBy('id', 'asc')
      .select('id')
    const ids = entries.map((entry) => Number(entry.id))
    // Entries are appended in time order: every entry up to the row's third last made 3 days
    // old (the row's last two, and whatever comes after them, stay recent).
    const old = Math.floor(Date.now() / 1000) - 3 * 86400
    await db.from('table_cell_history').where('id', '<=', ids.at(-3)!).update({ created_at: old })
    const service = await app.container.make(HistoryService)
    assert.isAtLeast(await service.prune({ maxPerTable: 0, days: 2 }), ids.length - 2)
    const kept = await history(fx, fx.a)
    assert.deepEqual(
      kept.changes.map((change: any) => change.new),
      ['d3', 'd2']
    )
    // Nothing is older than the days kept any more: a second pass removes nothing of the row's.
    await service.prune({ maxPerTable: 0, days: 2 })
    const again = await history(fx, fx.a)
    assert.equal(again.total, 2)
  })
})

test.group('tables: rollBackBeforeChange', () => {
  const roll = (fx: Fixture, params: Record<string, unknown>) =>
    fx.owner('rollBackBeforeChange', { b_o: fx.book.b_o, ...params })

  test('by changeId: the row goes back to before that change, every later change undone', async ({
    assert,
  }) => {
    const fx = await fixture()
    await set(fx, fx.a, fx.f.name, 'n1')
    const [target] = await changesOf(fx, fx.a)
    await set(fx, fx.a, fx.f.qty, 9)
    await set(fx, fx.a, fx.f.name, 'n2')
    await set(fx, fx.b, fx.f.name, 'other row')
    const answer = ok(await roll(fx, { rowId: String(fx.a), changeId: target.id }))
    assert.deepEqual(answer.rowIds, [fx.a])
    const rows = await rowsOf(fx.owner, fx.catId)
    assert.equal(rows[fx.a][fx.f.name], 'a')
    assert.equal(rows[fx.a][fx.f.qty], 1)
    assert.equal(rows[fx.b][fx.f.name], 'other row')
    // The rollback is itself a recorded change, and can be rolled back.
    const [latest] = await changesOf(fx, fx.a)
    assert.equal(latest.operation, 'rollBackBeforeChange')
    ok(await roll(fx, { rowId: String(fx.a), changeId: latest.id }))
    const again = await rowsOf(fx.owner, fx.catId)
    assert.equal(again[fx.a][fx.f.name], 'n2')
    assert.equal(again[fx.a][fx.f.qty], 9)
  })

  test('by sstamp, and with scope=change every row of a bulk write', async ({ assert }) => {
    const fx = await fixture()
    await set(fx, fx.a, fx.f.name, 's1')
    const [s1] = await changesOf(fx, fx.a)
    const stamp = s1.s
    await set(fx, fx.a, fx.f.name, 's2')
    ok(await roll(fx, { rowId: String(fx.a), sstamp: stamp }))
    const rolled = await rowOf(fx, fx.a)
    assert.equal(rolled[fx.f.name], 'a')

    ok(
      await fx.owner('createOrUpdateTableRows', {
        b_o: fx.book.b_o,
        rows: JSON.stringify({ [fx.a]: { [fx.f.qty]: 100 }, [fx.b]: { [fx.f.qty]: 200 } }),
      })
    )
    await set(fx, fx.b, fx.f.name, 'later')
    const [bulk] = await changesOf(fx, fx.a, { fieldId: fx.f.qty })
    assert.equal(bulk.new, 100)
    const answer = ok(await roll(fx, { rowId: String(fx.a), changeId: bulk.id, scope: 'change' }))
    assert.sameMembers(answer.rowIds, [fx.a, fx.b])
    const rows = await rowsOf(fx.owner, fx.catId)
    assert.equal(rows[fx.a][fx.f.qty], 1)
    assert.isNull(rows[fx.b][fx.f.qty])
    assert.equal(rows[fx.b][fx.f.name], 'b') // a later change of a touched row is undone too
  })

  test('across a deleted field: CONFLICT and nothing changed', async ({ assert }) => {
    const fx = await fixture()
    await set(fx, fx.a, fx.f.qty, 2)
    const [target] = await changesOf(fx, fx.a)
    await set(fx, fx.a, fx.f.name, 'kept')
    const extra = ok(
      await fx.owner('createField', {
        b_o: fx.book.b_o,
        catId: fx.catId,
        name: 'Extra',
        type: 'shorttext',
      })
    )
    await set(fx, fx.a, extra.fieldId, 'gone soon')
    ok(await fx.owner('deleteField', { b_o: fx.book.b_o, fieldId: extra.fieldId }))
    const before = await rowsOf(fx.owner, fx.catId)
    const total = await totalOf(fx, fx.a)
    assert.equal(
      await errorCode(roll(fx, { rowId: String(fx.a), changeId: target.id })),
      'CONFLICT'
    )
    assert.deepEqual(await rowsOf(fx.owner, fx.catId), before)
    assert.equal(await totalOf(fx, fx.a), total)
  })

  test('rights: a stranger, a restricted session, a reader and a member without the table right', async ({
    assert,
  }) => {
    const fx = await fixture()
    await set(fx, fx.a, fx.f.name, 'z')
    const [change] = await changesOf(fx, fx.a)
    const params = { rowId: String(fx.a), changeId: change.id }
    const other = await makeBook()
    const stranger = caller(other.session)
    assert.equal(await errorCode(stranger('getRowHistory', params)), 'NOT_FOUND')
    assert.equal(await errorCode(stranger('rollBackBeforeChange', params)), 'NOT_FOUND')
    const hidden = caller(await login(fx.book.owner, { restrictions: 'hideTables' }))
    assert.equal(await errorCode(hidden('getRowHistory', params)), 'RESTRICTED_SESSION')
    assert.equal(await errorCode(hidden('rollBackBeforeChange', params)), 'RESTRICTED_SESSION')
    const reader = caller(fx.book.members[1].session)
    ok(await reader('getRowHistory', params))
    assert.equal(await errorCode(reader('rollBackBeforeChange', params)), 'FORBIDDEN')
    ok(await fx.owner('updateTable', { catId: fx.catId, rights: JSON.stringify({ select: 3 }) }))
    const writer = caller(fx.book.members[0].session)
    assert.equal(await errorCode(writer('getRowHistory', params)), 'NOT_FOUND')
    assert.equal(await errorCode(writer('rollBackBeforeChange', params)), 'NOT_FOUND')
    const unchanged = await rowOf(fx, fx.a)
    assert.equal(unchanged[fx.f.name], 'z')
  })

  test('bad input answers documented codes and writes nothing', async ({ assert }) => {
    const fx = await fixture()
    const [change] = await changesOf(fx, fx.a)
    const code = (req: string, params: Record<string, unknown>) =>
      errorCode(fx.owner(req, { b_o: fx.book.b_o, ...params }))
    assert.equal(await code('getRowHistory', {}), 'MISSING_PARAMETER')
    assert.equal(await code('getRowHistory', { rowId: 'abc' }), 'INVALID_PARAMETER')
    assert.equal(await code('getRowHistory', { rowId: fx.a, nbMax: 0 }), 'INVALID_PARAMETER')
    assert.equal(await code('getRowHistory', { rowId: fx.a, page: 0 }), 'INVALID_PARAMETER')
    assert.equal(await code('getRowHistory', { rowId: fx.a, fieldId: 999999 }), 'INVALID_PARAMETER')
    assert.equal(await code('rollBackBeforeChange', {}), 'MISSING_PARAMETER')
    assert.equal(await code('rollBackBeforeChange', { rowId: fx.a }), 'MISSING_PARAMETER')
    assert.equal(
      await code('rollBackBeforeChange', { rowId: fx.a, changeId: 'x' }),
      'INVALID_PARAMETER'
    )
    assert.equal(
      await code('rollBackBeforeChange', { rowId: fx.a, changeId: change.id, scope: 'all' }),
      'INVALID_PARAMETER'
    )
    assert.equal(
      await code('rollBackBeforeChange', { rowId: fx.a, sstamp: 1, scope: 'change' }),
      'MISSING_PARAMETER'
    )
    assert.equal(
      await code('rollBackBeforeChange', { rowId: fx.b, changeId: change.id }),
      'NOT_FOUND'
    )
    assert.equal(await totalOf(fx, fx.a), 2)
  })
})
