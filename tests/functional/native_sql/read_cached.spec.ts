import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { isMysql, readCached } from '#core/native_sql'

/**
 * readCached (app/core/native_sql.ts): on SQLite a result is answered again, the same rows, while
 * no connection commits, per statement and bindings; any commit makes the next call read again.
 * On MySQL every call reads.
 */
const TABLE = 'read_cached_probe'
const SQL = `SELECT id, name FROM ${TABLE} WHERE id = ?`

test.group('native_sql readCached', (group) => {
  group.each.setup(async () => {
    await db.rawQuery(`DROP TABLE IF EXISTS ${TABLE}`)
    await db.rawQuery(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, name TEXT)`)
    await db.table(TABLE).multiInsert([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ])
    return () => db.rawQuery(`DROP TABLE IF EXISTS ${TABLE}`)
  })

  test('each binding its own result; a commit anywhere is seen by the next call', async ({
    assert,
  }) => {
    const one = await readCached(SQL, [1])
    const two = await readCached(SQL, [2])
    assert.deepEqual(one, [{ id: 1, name: 'one' }])
    assert.deepEqual(two, [{ id: 2, name: 'two' }])
    const again = await readCached(SQL, [1])
    assert.deepEqual(again, one)
    // Nothing committed in between: SQLite answers the kept rows themselves.
    if (!isMysql()) assert.strictEqual(again, one)

    await db.from(TABLE).where('id', 1).update({ name: 'changed' })
    assert.deepEqual(await readCached(SQL, [1]), [{ id: 1, name: 'changed' }])
    assert.deepEqual(await readCached(SQL, [2]), [{ id: 2, name: 'two' }])

    // A commit to another table also counts: the next call reads again.
    const kept = await readCached(SQL, [2])
    await db.rawQuery(`CREATE TABLE IF NOT EXISTS ${TABLE}_other (id INTEGER)`)
    await db.rawQuery(`DROP TABLE IF EXISTS ${TABLE}_other`)
    const reread = await readCached(SQL, [2])
    assert.deepEqual(reread, kept)
    if (!isMysql()) assert.notStrictEqual(reread, kept)
  })
})
