import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { caller, errorCode, makeBook, ok } from '../helpers/tables.js'

/** A book (owner, a writer, a reader) with a table holding a comments field and two rows. */
async function fixture() {
  const book = await makeBook([{ right: 2 }, { right: 1 }])
  const owner = caller(book.session)
  const writer = caller(book.members[0].session)
  const reader = caller(book.members[1].session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const table = ok(
    await owner('createTable', {
      ...base,
      name: 'Tasks',
      code: 'tasks',
      fields: JSON.stringify([
        { name: 'Name', type: 'shorttext' },
        { name: 'Talk', type: 'comments' },
      ]),
    })
  )
  const catId = table.catId as number
  const defs = ok(
    await owner('getBookTables', { ...base, includeFields: 'true' })
  ).bookTables.categories.find((category: any) => category.id === catId).fields
  const name = defs.find((field: any) => field.name === 'Name').id as number
  const talk = defs.find((field: any) => field.name === 'Talk').id as number
  const rows = ok(
    await owner('createOrUpdateTableRows', {
      b_o: book.b_o,
      rows: JSON.stringify({ tmp1: { [name]: 'one' }, tmp2: { [name]: 'two' } }),
    })
  )
  const [r1, r2] = rows.newRows.map((row: any) => row.id as number)
  return { book, owner, writer, reader, catId, name, talk, r1, r2 }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

const cells = async (call: ReturnType<typeof caller>, catId: number, extra = {}) =>
  ok(await call('getTableValues', { catId, format: 'diff_ready_rows', ...extra })).tableValues

/**
 * A thread: the owner's "first", then the writer's "second" and "third" on
 * row 1, and the writer's "elsewhere" (with an action) on row 2.
 */
async function withThreads() {
  const fx = await fixture()
  const { owner, writer, talk, r1, r2 } = fx
  const first = ok(
    await owner('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'first' })
  )
  for (const m of ['second', 'third'])
    ok(await writer('editTableValueComments', { fieldId: talk, rowId: String(r1), m }))
  ok(
    await writer('editTableValueComments', {
      fieldId: talk,
      rowId: String(r2),
      m: 'elsewhere',
      action: JSON.stringify(['mention']),
    })
  )
  return { ...fx, first, writerCode: fx.book.members[0].user.code }
}

test.group('tables: comment threads', (group) => {
  let fx: Awaited<ReturnType<typeof withThreads>>
  group.setup(async () => {
    fx = await withThreads()
  })

  test('a cell without comments is null', async ({ assert }) => {
    const { owner, catId, talk, r1, r2 } = await fixture()
    const empty = await cells(owner, catId)
    assert.isNull(empty.rows[r1][talk])
    assert.isNull(empty.rows[r2][talk])
  })

  test('editTableValueComments answers the new id, the cell and its thread', ({ assert }) => {
    const { first, talk, r1, book } = fx
    assert.isNumber(first.id)
    assert.strictEqual(first.rowId, r1)
    assert.strictEqual(first.fieldId, talk)
    assert.equal(first.data.status, 'ok')
    assert.deepEqual(
      first.data.comments.map((comment: any) => comment.m),
      ['first']
    )
    assert.strictEqual(first.data.summary.total, 1)
    assert.isAbove(first.data.users[book.b_o].n.length, 0)
  })

  test("one's own comments are never unread", ({ assert }) => {
    assert.strictEqual(fx.first.data.summary.totalUnread, 0)
  })

  test('without maxComments a cell is its summary only, and the answer has no users', async ({
    assert,
  }) => {
    const plain = await cells(fx.owner, fx.catId)
    assert.notProperty(plain, 'users')
    assert.notProperty(plain.rows[fx.r1][fx.talk], 'comments')
    const summary = plain.rows[fx.r1][fx.talk].summary
    assert.strictEqual(summary.total, 3)
    assert.strictEqual(summary.from, fx.writerCode)
    assert.isNull(summary.notifSubscribe)
    assert.isAbove(summary.sstamp, 0)
    assert.strictEqual(plain.rows[fx.r2][fx.talk].summary.total, 1)
  })

  test("a reader's unread count is the others' comments after the reader's position", async ({
    assert,
  }) => {
    const other = await cells(fx.reader, fx.catId)
    assert.strictEqual(other.rows[fx.r1][fx.talk].summary.totalUnread, 3)
    const plain = await cells(fx.owner, fx.catId)
    assert.strictEqual(plain.rows[fx.r1][fx.talk].summary.totalUnread, 2)
  })

  test('maxComments: the last N comments of a cell, oldest first, with ur', async ({ assert }) => {
    const last = await cells(fx.owner, fx.catId, { maxComments: 2 })
    const thread = last.rows[fx.r1][fx.talk].comments
    assert.deepEqual(
      thread.map((comment: any) => [comment.m, comment.uc, comment.ur]),
      [
        ['second', fx.writerCode, true],
        ['third', fx.writerCode, true],
      ]
    )
    for (const key of ['id', 'm', 'mid', 'action', 'uc', 'c', 's', 'ur'])
      assert.property(thread[0], key)
  })

  test('maxComments: users names the authors of the comments shown', async ({ assert }) => {
    const last = await cells(fx.owner, fx.catId, { maxComments: 2 })
    assert.deepEqual(Object.keys(last.users), [fx.writerCode])
    assert.isString(last.users[fx.writerCode].n)
    assert.isNumber(last.users[fx.writerCode].s)
  })

  test('a comment keeps its action list', async ({ assert }) => {
    const last = await cells(fx.owner, fx.catId, { maxComments: 1 })
    assert.deepEqual(last.rows[fx.r2][fx.talk].comments[0].action, ['mention'])
  })

  test('the columns format carries the same cells', async ({ assert }) => {
    const columns = ok(
      await fx.owner('getTableValues', { catId: fx.catId, maxComments: 1 })
    ).tableValues
    const column = columns.fields.find((field: any) => field.id === fx.talk)
    assert.deepEqual(
      column.values.find((value: any) => value.id === fx.r1).value.comments.map((c: any) => c.m),
      ['third']
    )
  })

  test('getNamedTableValues takes maxComments the same way', async ({ assert }) => {
    const named = ok(
      await fx.owner('getNamedTableValues', {
        b_o: fx.book.b_o,
        b_c: fx.book.b_c,
        catCode: 'tasks',
        format: 'diff_ready_rows',
        maxComments: 1,
      })
    ).tableValues
    assert.deepEqual(
      named.rows[fx.r2][fx.talk].comments.map((comment: any) => comment.m),
      ['elsewhere']
    )
    assert.deepEqual(Object.keys(named.users), [fx.writerCode])
  })
})

test.group('tables: getTableValueComments', () => {
  test('answers the whole thread, oldest first, its summary before the read and every author', async ({
    assert,
  }) => {
    const fx = await withThreads()
    const full = ok(
      await fx.owner('getTableValueComments', { fieldId: fx.talk, rowId: String(fx.r1) })
    )
    assert.deepEqual(
      full.data.comments.map((comment: any) => comment.m),
      ['first', 'second', 'third']
    )
    assert.strictEqual(full.data.summary.totalUnread, 2)
    assert.deepEqual(Object.keys(full.data.users).sort(), [fx.book.b_o, fx.writerCode].sort())
    assert.isNumber(full.data.formLastModified)
  })

  test('marks the thread read for that reader only', async ({ assert }) => {
    const fx = await withThreads()
    ok(await fx.owner('getTableValueComments', { fieldId: fx.talk, rowId: String(fx.r1) }))
    const read = await cells(fx.owner, fx.catId)
    assert.strictEqual(read.rows[fx.r1][fx.talk].summary.totalUnread, 0)
    const other = await cells(fx.reader, fx.catId)
    assert.strictEqual(other.rows[fx.r1][fx.talk].summary.totalUnread, 3)
  })

  test('a reader may read a thread', async () => {
    const fx = await withThreads()
    ok(await fx.reader('getTableValueComments', { fieldId: fx.talk, rowId: String(fx.r1) }))
  })

  test('a missing row is NOT_FOUND', async ({ assert }) => {
    const { owner, talk, r2 } = await fixture()
    assert.equal(
      await errorCode(owner('getTableValueComments', { fieldId: talk, rowId: String(r2 + 1000) })),
      'NOT_FOUND'
    )
  })
})

test.group('tables: comment writes', (group) => {
  let fx: Fixture
  group.setup(async () => {
    fx = await fixture()
  })

  test('an author changes their own comment', async ({ assert }) => {
    const { writer, talk, r1 } = fx
    const mine = ok(
      await writer('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'draft' })
    ).id as number
    const edited = ok(
      await writer('editTableValueComments', {
        fieldId: talk,
        rowId: String(r1),
        id: mine,
        m: 'final',
      })
    )
    assert.strictEqual(edited.id, mine)
    assert.include(
      edited.data.comments.map((comment: any) => comment.m),
      'final'
    )
    assert.notInclude(
      edited.data.comments.map((comment: any) => comment.m),
      'draft'
    )
  })

  test("nobody changes another's comment (FORBIDDEN)", async ({ assert }) => {
    const { owner, writer, talk, r1 } = fx
    const theirs = ok(
      await owner('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'boss' })
    ).id
    assert.equal(
      await errorCode(
        writer('editTableValueComments', { fieldId: talk, rowId: String(r1), id: theirs, m: 'x' })
      ),
      'FORBIDDEN'
    )
  })

  test('a reader cannot comment (FORBIDDEN)', async ({ assert }) => {
    assert.equal(
      await errorCode(
        fx.reader('editTableValueComments', { fieldId: fx.talk, rowId: String(fx.r1), m: 'x' })
      ),
      'FORBIDDEN'
    )
  })

  test('a blank comment is MISSING_PARAMETER', async ({ assert }) => {
    assert.equal(
      await errorCode(
        fx.owner('editTableValueComments', { fieldId: fx.talk, rowId: String(fx.r1), m: ' ' })
      ),
      'MISSING_PARAMETER'
    )
  })

  test('a field that is not a comments field is INVALID_PARAMETER', async ({ assert }) => {
    assert.equal(
      await errorCode(
        fx.owner('editTableValueComments', { fieldId: fx.name, rowId: String(fx.r1), m: 'x' })
      ),
      'INVALID_PARAMETER'
    )
  })

  test('a missing row is NOT_FOUND', async ({ assert }) => {
    assert.equal(
      await errorCode(
        fx.owner('editTableValueComments', {
          fieldId: fx.talk,
          rowId: String(fx.r2 + 1000),
          m: 'x',
        })
      ),
      'NOT_FOUND'
    )
  })

  test("a writer cannot delete another's comment; an administrator can", async ({ assert }) => {
    const { owner, writer, talk, r2 } = fx
    const theirs = ok(
      await writer('editTableValueComments', { fieldId: talk, rowId: String(r2), m: 'w' })
    ).id as number
    const boss = ok(
      await owner('editTableValueComments', { fieldId: talk, rowId: String(r2), m: 'o' })
    ).id as number
    assert.equal(
      await errorCode(
        writer('deleteTableValueComments', { fieldId: talk, rowId: String(r2), ids: String(boss) })
      ),
      'FORBIDDEN'
    )
    const removed = ok(
      await owner('deleteTableValueComments', { fieldId: talk, rowId: String(r2), ids: [theirs] })
    )
    assert.deepEqual([removed.fieldId, removed.rowId, removed.deleted], [talk, r2, 1])
  })

  test('a comment deleted twice is NOT_FOUND the second time', async ({ assert }) => {
    const { writer, talk, r1 } = fx
    const mine = ok(
      await writer('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'once' })
    ).id as number
    ok(
      await writer('deleteTableValueComments', { fieldId: talk, rowId: String(r1), ids: `${mine}` })
    )
    assert.equal(
      await errorCode(
        writer('deleteTableValueComments', { fieldId: talk, rowId: String(r1), ids: String(mine) })
      ),
      'NOT_FOUND'
    )
  })
})

test.group('tables: comments go with their row and field', () => {
  test('a deleted row takes its comments along', async ({ assert }) => {
    const { owner, writer, talk, r1, r2 } = await fixture()
    ok(await owner('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'a' }))
    ok(await writer('editTableValueComments', { fieldId: talk, rowId: String(r2), m: 'keep' }))
    ok(await owner('deleteTableRow', { rowId: String(r1) }))
    const left = await db.from('table_comments').where('field_id', talk).select('row_id')
    assert.deepEqual(
      left.map((row) => Number(row.row_id)),
      [r2]
    )
  })

  test('a deleted field takes its comments along', async ({ assert }) => {
    const { owner, talk, r2 } = await fixture()
    ok(await owner('editTableValueComments', { fieldId: talk, rowId: String(r2), m: 'a' }))
    ok(await owner('deleteField', { fieldId: talk }))
    const none = await db.from('table_comments').where('field_id', talk).count('* as total')
    assert.strictEqual(Number(none[0].total), 0)
  })
})
