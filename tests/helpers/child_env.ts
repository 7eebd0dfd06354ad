import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onMysql } from './database.js'

/**
 * The environment of a Quire process a test starts: on MariaDB (+ Redis) the suite's database
 * and Redis, which the test bootstrap migrated; otherwise, or with `embedded`, the embedded
 * defaults (no DB_ or REDIS_ variable), so the child never shares the suite's SQLite file.
 * A data folder of its own (made here only when `overrides` names none; the caller removes it),
 * quiet logs; `overrides` win.
 */
export function childEnv(
  overrides: NodeJS.ProcessEnv = {},
  options: { embedded?: boolean } = {}
): NodeJS.ProcessEnv {
  const base =
    onMysql() && !options.embedded
      ? { ...process.env }
      : Object.fromEntries(
          Object.entries(process.env).filter(([key]) => !/^(DB_|REDIS_)/.test(key))
        )
  return {
    ...base,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    ...overrides,
    DATA_DIR: overrides.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'quire-child-')),
  }
}
