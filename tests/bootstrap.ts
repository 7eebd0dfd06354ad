import { assert } from '@japa/assert'
import app from '@adonisjs/core/services/app'
import type { Config } from '@japa/runner/types'
import { pluginAdonisJS } from '@japa/plugin-adonisjs'
import { freshDatabase, freshRedis } from '#tests/helpers/database'
import { startServer } from '#tests/helpers/server'

/**
 * Every suite runs against a real, freshly migrated database (SQLite by
 * default, MariaDB with DB_CONNECTION=mysql) and a real HTTP server on a free
 * loopback port. Tests needing Redis or MariaDB skip visibly without them.
 */
export const plugins: Config['plugins'] = [assert(), pluginAdonisJS(app)]

export const runnerHooks: Required<Pick<Config, 'setup' | 'teardown'>> = {
  setup: [() => freshDatabase(), () => freshRedis()],
  teardown: [],
}

export const configureSuite: Config['configureSuite'] = (suite) => {
  if (['functional', 'fuzz', 'authz', 'e2e', 'browser'].includes(suite.name)) {
    return suite.setup(() => startServer())
  }
}
