import { test } from '@japa/runner'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import db from '@adonisjs/lucid/services/db'
import dbConfig from '#config/database'
import {
  AUTOCHECKPOINT_PAGES,
  JOURNAL_SIZE_LIMIT,
  checkpointNow,
  pauseCheckpoints,
} from '#core/sqlite_checkpointer'
import { onMysql } from '#tests/helpers/database'
import { childEnv } from '#tests/helpers/child_env'
import { ROOT, signIn, startQuire } from '../../../bench/lib/quire_process.js'

/**
 * SQLite's WAL checkpoints (app/core/sqlite_checkpointer.ts): a thread of each process
 * checkpoints, not the COMMIT of a request; the WAL stays bounded; a process that closes its
 * database leaves its commits in the database file itself.
 */

/** Whether the database file alone (without its -wal) holds `sql`'s answer: a checkpoint copied it. */
function inFileAlone(file: string, sql: string) {
  const dir = mkdtempSync(join(tmpdir(), 'quire-wal-'))
  try {
    copyFileSync(file, join(dir, 'copy.sqlite'))
    const copy = new Database(join(dir, 'copy.sqlite'), { readonly: true })
    try {
      return copy.prepare(sql).all()
    } finally {
      copy.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A Lucid connection of the test's own, configured as the app's SQLite connection, on `file`. */
function probeConnection(name: string, file: string) {
  const sqlite = dbConfig.connections.sqlite as any
  db.manager.add(name, { ...sqlite, connection: { filename: file } })
  db.manager.connect(name)
  return db.connection(name)
}

const PAGE_SIZE = 4096
const ROWS_PER_COMMIT = 100

/** A probe connection on a file of its own, its driver connection, removed at the test's end. */
async function probe(name: string, cleanup: (handler: () => void | Promise<void>) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'quire-wal-'))
  cleanup(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, `${name}.sqlite`)
  const client = probeConnection(name, file)
  cleanup(() => db.manager.close(name))
  const knex: any = client.getWriteClient()
  const connection = await knex.client.acquireConnection()
  await knex.client.releaseConnection(connection)
  return { client, connection, file }
}

/** 16,000 rows of a page each, 100 a transaction (66 MB); the WAL's largest size meanwhile. */
async function writeBlobs(client: ReturnType<typeof db.connection>, walSize: () => number) {
  await client.rawQuery('CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)')
  const blob = Buffer.alloc(3900, 7)
  let largestWal = 0
  for (let commit = 0; commit < 160; commit++) {
    await client.table('blobs').multiInsert(
      Array.from({ length: ROWS_PER_COMMIT }, (_, i) => ({
        id: commit * ROWS_PER_COMMIT + i + 1,
        data: blob,
      }))
    )
    largestWal = Math.max(largestWal, walSize())
  }
  return { largestWal, bytes: 160 * ROWS_PER_COMMIT * blob.length }
}

test.group('SQLite checkpoints', () => {
  test('a write connection checkpoints from its thread, and on closing', async ({
    assert,
    cleanup,
  }) => {
    const { client, connection, file } = await probe('wal_probe', cleanup)
    assert.equal(connection.pragma('wal_autocheckpoint', { simple: true }), AUTOCHECKPOINT_PAGES)
    assert.equal(connection.pragma('journal_mode', { simple: true }), 'wal')
    assert.equal(connection.pragma('synchronous', { simple: true }), 1) // NORMAL, as before

    await client.rawQuery('CREATE TABLE probe (id INTEGER PRIMARY KEY, name TEXT)')
    for (let i = 1; i <= 20; i++) await client.table('probe').insert({ id: i, name: `n${i}` })
    const result = await checkpointNow(connection)
    assert.isNotNull(result)
    assert.equal(result!.checkpointed, result!.log)
    assert.lengthOf(inFileAlone(file, 'SELECT id FROM probe'), 20)

    await client.table('probe').insert({ id: 21, name: 'last' })
    await db.manager.close('wal_probe')
    assert.deepEqual(inFileAlone(file, 'SELECT name FROM probe WHERE id = 21'), [{ name: 'last' }])
  }).skip(onMysql(), 'SQLite only')

  test('without the thread, the commits checkpoint past the backstop: the WAL stays bounded', async ({
    assert,
    cleanup,
  }) => {
    const { client, connection, file } = await probe('wal_bound', cleanup)
    await pauseCheckpoints(connection, true)
    const written = await writeBlobs(client, () => statSync(`${file}-wal`).size)
    // The backstop's pages, a few transactions' worth of pages (rows, index) and headers.
    const bound = (AUTOCHECKPOINT_PAGES + 4 * ROWS_PER_COMMIT) * (PAGE_SIZE + 24) + 32
    assert.isBelow(written.largestWal, bound, `WAL file grew to ${written.largestWal} bytes`)
    assert.isAbove(written.bytes, bound) // without checkpoints the WAL would have held it all
  })
    .skip(onMysql(), 'SQLite only')
    .timeout(120_000)

  test('with the thread, a long run of writes is checkpointed and the WAL restarts', async ({
    assert,
    cleanup,
  }) => {
    const { client, connection, file } = await probe('wal_run', cleanup)
    const written = await writeBlobs(client, () => statSync(`${file}-wal`).size)
    assert.isAbove(written.bytes, AUTOCHECKPOINT_PAGES * PAGE_SIZE)
    await pauseCheckpoints(connection, true) // no checkpoint of the timer's in the way of the next
    const result = await checkpointNow(connection)
    assert.equal(result!.checkpointed, result!.log)
    // The first write after a complete checkpoint restarts the WAL (its file is cut back past the limit).
    await client.table('blobs').insert({ id: 1_000_000, data: Buffer.alloc(10) })
    const after = await checkpointNow(connection)
    assert.isAtMost(after!.log, 10)
    assert.isAtMost(statSync(`${file}-wal`).size, JOURNAL_SIZE_LIMIT)
  })
    .skip(onMysql(), 'SQLite only')
    .timeout(120_000)

  test('an ace command and the web server leave their commits in the database file', async ({
    assert,
    cleanup,
  }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quire-wal-child-'))
    cleanup(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = childEnv({ DATA_DIR: dataDir }, { embedded: true })
    const setup = spawnSync(process.execPath, ['ace', 'quire:setup'], { cwd: ROOT, env })
    assert.equal(setup.status, 0, `${setup.stdout}${setup.stderr}`)
    const file = join(dataDir, 'quire.sqlite')
    const admin = JSON.parse(readFileSync(join(dataDir, 'demo-admin.json'), 'utf8'))
    assert.lengthOf(inFileAlone(file, `SELECT id FROM users WHERE code = 'admin'`), 1)

    const server = await startQuire(env)
    try {
      await signIn(server.url, admin.email, admin.password)
    } finally {
      await server.stop()
    }
    assert.lengthOf(inFileAlone(file, 'SELECT id FROM api_sessions'), 1)
  })
    .skip(onMysql(), 'SQLite only')
    .timeout(240_000)
})
