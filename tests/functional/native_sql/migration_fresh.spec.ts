import { test } from '@japa/runner'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { SqliteShadowTables } from '#core/sqlite_shadow_tables'
import { childEnv } from '#tests/helpers/child_env'
import { ROOT } from '../../../bench/lib/quire_process.js'

/**
 * `node ace migration:fresh` on an SQLite file whose tables have text indexes (FTS5 virtual
 * tables and their shadow tables): Lucid drops every table the file lists, and failed on the
 * shadow tables its text index had taken along (config/database.ts, app/core/sqlite_shadow_tables.ts).
 * The child runs on the embedded defaults in both suites.
 */
test.group('migration:fresh on SQLite with text indexes', () => {
  test('the shadow tables are left to their index, and the database starts over', async ({
    assert,
    cleanup,
  }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quire-fresh-'))
    cleanup(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = childEnv({ DATA_DIR: dataDir }, { embedded: true })
    const ace = (...args: string[]) => {
      const run = spawnSync(process.execPath, ['ace', ...args], { cwd: ROOT, env })
      assert.equal(run.status, 0, `ace ${args.join(' ')}: ${run.stdout}${run.stderr}`)
    }
    ace('migration:run')
    const file = join(dataDir, 'quire.sqlite')
    const database = new Database(file)
    // As the tables plugin makes them: a row table and its column's trigram index.
    database.exec(`CREATE TABLE tt_1 (id INTEGER PRIMARY KEY, f1 TEXT)`)
    database.exec(
      `CREATE VIRTUAL TABLE tt_1_fts_f1 USING fts5(f1, content='tt_1', content_rowid='id', tokenize='trigram')`
    )
    database.close()

    const shadows = new SqliteShadowTables(file)
    for (const suffix of ['_data', '_idx', '_docsize', '_config'])
      assert.isTrue(shadows.includes(`tt_1_fts_f1${suffix}`), suffix)
    for (const name of ['tt_1_fts_f1', 'tt_1', 'users'])
      assert.isFalse(shadows.includes(name), name)
    assert.isFalse(
      new SqliteShadowTables(join(dataDir, 'missing.sqlite')).includes('tt_1_fts_f1_data')
    )

    ace('migration:fresh', '--force')
    const after = new Database(file, { readonly: true })
    try {
      const names = (
        after.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as {
          name: string
        }[]
      ).map((row) => row.name)
      assert.notInclude(names, 'tt_1')
      assert.isEmpty(names.filter((name) => name.startsWith('tt_1_fts_f1')))
      assert.include(names, 'users')
    } finally {
      after.close()
    }
  }).timeout(180_000)
})
