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

const cells = async (call: ReturnType<typeof caller>, catId: number, extra = {}) =>
  ok(await call('getTableValues', { catId, format: 'diff_ready_rows', ...extra })).tableValues

test.group('tables: comments on cells', () => {
  test('comment threads: summary, last comments with maxComments, unread per reader, getTableValueComments', async ({
    assert,
  }) => {
    const { book, owner, writer, reader, catId, talk, r1, r2 } = await fixture()
    const writerCode = book.members[0].user.code
    const empty = await cells(owner, catId)
    assert.isNull(empty.rows[r1][talk])

    const first = ok(
      await owner('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'first' })
    )
    assert.isNumber(first.id)
    assert.strictEqual(first.rowId, r1)
    assert.strictEqual(first.fieldId, talk)
    assert.equal(first.data.status, 'ok')
    assert.deepEqual(
      first.data.comments.map((comment: any) => comment.m),
      ['first']
    )
    assert.strictEqual(first.data.summary.total, 1)
    assert.strictEqual(first.data.summary.totalUnread, 0) // one's own comments are never unread
    assert.equal(first.data.users[book.b_o].n.length > 0, true)
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

    // Without maxComments: only the summary, no `users`.
    const plain = await cells(owner, catId)
    assert.notProperty(plain, 'users')
    const summary = plain.rows[r1][talk].summary
    assert.notProperty(plain.rows[r1][talk], 'comments')
    assert.strictEqual(summary.total, 3)
    assert.strictEqual(summary.totalUnread, 2)
    assert.strictEqual(summary.from, writerCode)
    assert.isNull(summary.notifSubscribe)
    assert.isAbove(summary.sstamp, 0)
    assert.strictEqual(plain.rows[r2][talk].summary.total, 1)

    // maxComments: the last N per cell, oldest first, with `ur`, and their authors in `users`.
    const last = await cells(owner, catId, { maxComments: 2 })
    const thread = last.rows[r1][talk].comments
    assert.deepEqual(
      thread.map((comment: any) => [comment.m, comment.uc, comment.ur]),
      [
        ['second', writerCode, true],
        ['third', writerCode, true],
      ]
    )
    for (const key of ['id', 'm', 'mid', 'action', 'uc', 'c', 's', 'ur'])
      assert.property(thread[0], key)
    assert.deepEqual(last.rows[r2][talk].comments[0].action, ['mention'])
    assert.deepEqual(Object.keys(last.users), [writerCode])
    assert.isString(last.users[writerCode].n)
    // The columns format carries the same cell.
    const columns = ok(await owner('getTableValues', { catId, maxComments: 1 })).tableValues
    const column = columns.fields.find((field: any) => field.id === talk)
    assert.deepEqual(
      column.values.find((value: any) => value.id === r1).value.comments.map((c: any) => c.m),
      ['third']
    )

    // getNamedTableValues takes maxComments the same way.
    const named = ok(
      await owner('getNamedTableValues', {
        b_o: book.b_o,
        b_c: book.b_c,
        catCode: 'tasks',
        format: 'diff_ready_rows',
        maxComments: 1,
      })
    ).tableValues
    assert.deepEqual(
      named.rows[r2][talk].comments.map((comment: any) => comment.m),
      ['elsewhere']
    )
    assert.deepEqual(Object.keys(named.users), [writerCode])

    // getTableValueComments: the whole thread; the reader has then read it.
    const full = ok(await owner('getTableValueComments', { fieldId: talk, rowId: String(r1) }))
    assert.deepEqual(
      full.data.comments.map((comment: any) => comment.m),
      ['first', 'second', 'third']
    )
    assert.strictEqual(full.data.summary.totalUnread, 2)
    assert.deepEqual(Object.keys(full.data.users).sort(), [book.b_o, writerCode].sort())
    assert.isNumber(full.data.formLastModified)
    const read = await cells(owner, catId)
    assert.strictEqual(read.rows[r1][talk].summary.totalUnread, 0)
    // Another reader's unread count is its own.
    const other = await cells(reader, catId)
    assert.strictEqual(other.rows[r1][talk].summary.totalUnread, 3)
    ok(await reader('getTableValueComments', { fieldId: talk, rowId: String(r1) }))
  })

  test('comment writes: authors edit their own, admins delete any, readers cannot write; rows and fields take their comments along', async ({
    assert,
  }) => {
    const { owner, writer, reader, catId, name, talk, r1, r2 } = await fixture()
    const mine = ok(
      await writer('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'draft' })
    ).id as number
    const theirs = ok(
      await owner('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'boss' })
    ).id as number
    const edited = ok(
      await writer('editTableValueComments', {
        fieldId: talk,
        rowId: String(r1),
        id: mine,
        m: 'final',
      })
    )
    assert.deepEqual(
      edited.data.comments.map((comment: any) => comment.m),
      ['final', 'boss']
    )
    assert.equal(
      await errorCode(
        writer('editTableValueComments', { fieldId: talk, rowId: String(r1), id: theirs, m: 'x' })
      ),
      'FORBIDDEN'
    )
    assert.equal(
      await errorCode(
        reader('editTableValueComments', { fieldId: talk, rowId: String(r1), m: 'x' })
      ),
      'FORBIDDEN'
    )
    assert.equal(
      await errorCode(
        owner('editTableValueComments', { fieldId: talk, rowId: String(r1), m: ' ' })
      ),
      'MISSING_PARAMETER'
    )
    assert.equal(
      await errorCode(
        owner('editTableValueComments', { fieldId: name, rowId: String(r1), m: 'x' })
      ),
      'INVALID_PARAMETER'
    )
    assert.equal(
      await errorCode(
        owner('editTableValueComments', { fieldId: talk, rowId: String(r2 + 1000), m: 'x' })
      ),
      'NOT_FOUND'
    )
    assert.equal(
      await errorCode(owner('getTableValueComments', { fieldId: talk, rowId: String(r2 + 1000) })),
      'NOT_FOUND'
    )
    assert.equal(
      await errorCode(
        writer('deleteTableValueComments', {
          fieldId: talk,
          rowId: String(r1),
          ids: String(theirs),
        })
      ),
      'FORBIDDEN'
    )
    const removed = ok(
      await owner('deleteTableValueComments', { fieldId: talk, rowId: String(r1), ids: [mine] })
    )
    assert.strictEqual(removed.deleted, 1)
    const after = await cells(owner, catId)
    assert.strictEqual(after.rows[r1][talk].summary.total, 1)
    assert.equal(
      await errorCode(
        owner('deleteTableValueComments', { fieldId: talk, rowId: String(r1), ids: String(mine) })
      ),
      'NOT_FOUND'
    )

    // A deleted row takes its comments along; a deleted field takes the rest.
    ok(await writer('editTableValueComments', { fieldId: talk, rowId: String(r2), m: 'keep' }))
    ok(await owner('deleteTableRow', { rowId: String(r1) }))
    const left = await db.from('table_comments').where('field_id', talk).select('row_id')
    assert.deepEqual(
      left.map((row) => Number(row.row_id)),
      [r2]
    )
    ok(await owner('deleteField', { fieldId: talk }))
    const none = await db.from('table_comments').where('field_id', talk).count('* as total')
    assert.strictEqual(Number(none[0].total), 0)
  })
})
