import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Database from 'better-sqlite3'
import { isMysql, nativeTransaction, readCached, writeQuery } from '#core/native_sql'
import { trackTables, untrackTables } from '#core/read_cache_epochs'
import { onMysql } from '#tests/helpers/database'

/**
 * readCached (app/core/native_sql.ts): on SQLite a result is answered again, the same rows, per
 * statement and bindings, until a commit writes a table the statement reads: for tables with an
 * epoch (app/core/read_cache_epochs.ts), their commits only, by any connection; for the others,
 * any commit. On MySQL every call reads.
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

const PARENT = 'read_cached_parent'
const CHILD = 'read_cached_child'
const OTHER = 'read_cached_other'
const CHILD_SQL = `SELECT c.id, c.name, p.name AS parent FROM ${CHILD} c JOIN ${PARENT} p ON p.id = c.parent_id WHERE c.id = ?`

test.group('native_sql readCached on tables with epochs', (group) => {
  group.each.setup(async () => {
    const drop = async () => {
      await untrackTables(db.connection(), [PARENT, CHILD])
      for (const table of [CHILD, PARENT, OTHER]) await db.rawQuery(`DROP TABLE IF EXISTS ${table}`)
    }
    await drop()
    await db.rawQuery(`CREATE TABLE ${PARENT} (id INTEGER PRIMARY KEY, name TEXT)`)
    await db.rawQuery(
      `CREATE TABLE ${CHILD} (id INTEGER PRIMARY KEY, name TEXT, parent_id INTEGER REFERENCES ${PARENT}(id) ON DELETE CASCADE)`
    )
    await db.rawQuery(`CREATE TABLE ${OTHER} (id INTEGER PRIMARY KEY, name TEXT)`)
    await db.table(PARENT).multiInsert([
      { id: 1, name: 'p1' },
      { id: 2, name: 'p2' },
    ])
    await db.table(CHILD).multiInsert([
      { id: 1, name: 'one', parent_id: 1 },
      { id: 2, name: 'two', parent_id: 2 },
    ])
    await trackTables(db.connection(), [PARENT, CHILD])
    return drop
  })

  test('kept across commits to other tables, read again after a commit to one of its tables', async ({
    assert,
  }) => {
    const one = await readCached(CHILD_SQL, [1])
    assert.deepEqual(one, [{ id: 1, name: 'one', parent: 'p1' }])
    await db.table(OTHER).insert({ id: 1, name: 'x' })
    await db.from(OTHER).where('id', 1).update({ name: 'y' })
    assert.strictEqual(await readCached(CHILD_SQL, [1]), one)

    // The joined table counts as much as the one named first.
    await db.from(PARENT).where('id', 1).update({ name: 'p1 renamed' })
    const renamed = await readCached(CHILD_SQL, [1])
    assert.deepEqual(renamed, [{ id: 1, name: 'one', parent: 'p1 renamed' }])
    assert.strictEqual(await readCached(CHILD_SQL, [1]), renamed)
  }).skip(onMysql(), 'SQLite only: MySQL does not cache')

  test('a commit of another connection (another process) is seen from the next event on', async ({
    assert,
  }) => {
    const before = await readCached(CHILD_SQL, [2])
    assert.deepEqual(before, [{ id: 2, name: 'two', parent: 'p2' }])
    const file = (db.connection().getWriteClient() as any).client.config.connection.filename
    const other = new Database(file)
    try {
      other.pragma('busy_timeout = 5000')
      other.prepare(`UPDATE ${CHILD} SET name = 'two by another' WHERE id = 2`).run()
    } finally {
      other.close()
    }
    // The data_version is read once per callback of the event loop: a commit of another
    // process made after that read is seen from the next event (the request that could know
    // of it arrives as one), not within the callback that read it.
    assert.strictEqual(await readCached(CHILD_SQL, [2]), before)
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(await readCached(CHILD_SQL, [2]), [
      { id: 2, name: 'two by another', parent: 'p2' },
    ])
  }).skip(onMysql(), 'SQLite only: MySQL does not cache')

  test("this process's own writes are seen at once, within the callback that read before them", async ({
    assert,
  }) => {
    const before = await readCached(CHILD_SQL, [1])
    // Through knex (Lucid), outside and inside a transaction.
    await db.from(CHILD).where('id', 1).update({ name: 'by knex' })
    assert.deepEqual(await readCached(CHILD_SQL, [1]), [{ id: 1, name: 'by knex', parent: 'p1' }])
    await db.transaction(async (trx) => {
      await trx.from(PARENT).where('id', 1).update({ name: 'p1 in trx' })
    })
    assert.deepEqual(await readCached(CHILD_SQL, [1]), [
      { id: 1, name: 'by knex', parent: 'p1 in trx' },
    ])
    // Through the driver-level statements of native_sql.
    await writeQuery(db.connection(), `UPDATE ${CHILD} SET name = ? WHERE id = ?`, ['native', 1])
    assert.deepEqual(await readCached(CHILD_SQL, [1]), [
      { id: 1, name: 'native', parent: 'p1 in trx' },
    ])
    await nativeTransaction((trx) =>
      writeQuery(trx, `UPDATE ${PARENT} SET name = ? WHERE id = ?`, ['p1 native trx', 1])
    )
    const after = await readCached(CHILD_SQL, [1])
    assert.deepEqual(after, [{ id: 1, name: 'native', parent: 'p1 native trx' }])
    assert.notStrictEqual(after, before)
  }).skip(onMysql(), 'SQLite only: MySQL does not cache')

  test('a write is seen once committed, not before; a cascade counts as a write', async ({
    assert,
  }) => {
    const before = await readCached(CHILD_SQL, [2])
    const trx = await db.transaction()
    try {
      await trx.from(CHILD).where('id', 2).update({ name: 'two in trx' })
      assert.strictEqual(await readCached(CHILD_SQL, [2]), before)
      await trx.commit()
    } catch (error) {
      await trx.rollback()
      throw error
    }
    assert.deepEqual(await readCached(CHILD_SQL, [2]), [
      { id: 2, name: 'two in trx', parent: 'p2' },
    ])

    const children = `SELECT id FROM ${CHILD} WHERE parent_id = ?`
    assert.deepEqual(await readCached(children, [1]), [{ id: 1 }])
    await db.from(PARENT).where('id', 1).delete() // the child goes by ON DELETE CASCADE
    assert.deepEqual(await readCached(children, [1]), [])
  }).skip(onMysql(), 'SQLite only: MySQL does not cache')

  test('a statement that also reads a table without an epoch is read again after any commit', async ({
    assert,
  }) => {
    const sql = `SELECT c.id, o.name FROM ${CHILD} c LEFT JOIN ${OTHER} o ON o.id = c.id WHERE c.id = ?`
    const first = await readCached(sql, [1])
    await db.table(OTHER).insert({ id: 1, name: 'now there' })
    assert.deepEqual(await readCached(sql, [1]), [{ id: 1, name: 'now there' }])
    assert.notStrictEqual(await readCached(sql, [1]), first)
  }).skip(onMysql(), 'SQLite only: MySQL does not cache')
})
