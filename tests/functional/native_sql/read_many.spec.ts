import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { readMany, readQuery } from '#core/native_sql'

/**
 * readMany (app/core/native_sql.ts) reads SQLite rows as arrays and names their columns from a
 * list kept per statement: the rows must be readQuery's, key for key and in the same order, and
 * stay so when the table's columns change between two reads of the same statement (`t.*`).
 */
const TABLE = 'read_many_probe'

async function same(assert: any, sql: string, bindings: unknown[] = []) {
  const expected = await readQuery(sql, bindings)
  // Twice: the first read names the columns, the second uses the list.
  for (let i = 0; i < 2; i++) {
    const rows = await readMany(sql, bindings)
    assert.deepEqual(rows, expected)
    assert.deepEqual(rows.map(Object.keys), expected.map(Object.keys))
  }
  return expected
}

test.group('native_sql readMany', (group) => {
  group.each.setup(async () => {
    await db.rawQuery(`DROP TABLE IF EXISTS ${TABLE}`)
    await db.rawQuery(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, ord INTEGER, name TEXT)`)
    await db.table(TABLE).multiInsert([
      { id: 1, ord: 2, name: 'one' },
      { id: 2, ord: 1, name: null },
      { id: 30, ord: 3, name: 'thirty' },
    ])
    return () => db.rawQuery(`DROP TABLE IF EXISTS ${TABLE}`)
  })

  test('answers the rows readQuery answers, in order, with the same keys', async ({ assert }) => {
    const rows = await same(assert, `SELECT t.* FROM ${TABLE} t ORDER BY t.ord`)
    assert.deepEqual(
      rows.map((row) => row.id),
      [2, 1, 30]
    )
    await same(assert, `SELECT t.* FROM ${TABLE} t WHERE t.id > ? ORDER BY t.id`, [1])
    await same(assert, `SELECT t.* FROM ${TABLE} t WHERE t.id > ? ORDER BY t.id`, [100])
    // A name given twice: the last value, at the first one's place (as better-sqlite3 makes it).
    await same(assert, `SELECT t.id, t.name AS id, t.ord FROM ${TABLE} t ORDER BY t.id`)
  })

  test('a column added or replaced between two reads of the same statement shows', async ({
    assert,
  }) => {
    const sql = `SELECT t.* FROM ${TABLE} t ORDER BY t.id`
    await same(assert, sql)
    await db.rawQuery(`ALTER TABLE ${TABLE} ADD COLUMN extra TEXT DEFAULT 'x'`)
    const added = await same(assert, sql)
    assert.deepEqual(Object.keys(added[0]), ['id', 'ord', 'name', 'extra'])
    // As many columns as before, other names: a list kept by count alone would misname them.
    await db.rawQuery(`ALTER TABLE ${TABLE} DROP COLUMN name`)
    await db.rawQuery(`ALTER TABLE ${TABLE} ADD COLUMN other INTEGER DEFAULT 7`)
    const replaced = await same(assert, sql)
    assert.deepEqual(Object.keys(replaced[0]), ['id', 'ord', 'extra', 'other'])
    assert.equal(replaced[0].other, 7)
  })
})
