import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface ScaffoldResult {
  id: string
  operation: string
  files: string[]
}

const pascal = (id: string) =>
  id.replace(/(^|_)([a-z0-9])/g, (_, __, letter: string) => letter.toUpperCase())
const snake = (name: string) => name.replace(/([A-Z])/g, '_$1').toLowerCase()

/** A plugin id: lower snake case, also a folder name and a table-name prefix. */
export const PLUGIN_ID = /^[a-z][a-z0-9_]{1,39}$/

/**
 * Writes a working plugin folder (manifest, one operation backed by one
 * migration, one functional test, a README) and appends the id to
 * config/plugins.ts. Refuses an invalid id or an existing folder.
 */
export async function scaffoldPlugin(
  root: string,
  id: string,
  now = new Date()
): Promise<ScaffoldResult> {
  if (!PLUGIN_ID.test(id)) {
    throw new Error(
      `Invalid plugin name "${id}": use 2-40 lower-case letters, digits and underscores, starting with a letter`
    )
  }
  const folder = join(root, 'plugins', id)
  if (existsSync(folder)) throw new Error(`plugins/${id} already exists`)

  const configPath = join(root, 'config', 'plugins.ts')
  const config = await readFile(configPath, 'utf8')
  const listMatch = config.match(/enabled:\s*\[([^\]]*)\]/)
  if (!listMatch)
    throw new Error('config/plugins.ts has no `enabled: [...]` list to add the plugin to')

  const Name = pascal(id)
  const operation = `get${Name}Status`
  const operationFile = snake(operation)
  const table = `${id}_items`
  const stamp = now.getTime()

  const files: Record<string, string> = {
    'plugin.ts': `import { definePlugin } from '#core/plugins/define_plugin'

export default definePlugin({
  id: '${id}',
  version: '0.1.0',
  description: 'TODO: what ${id} owns',
  operations: {
    ${operation}: () => import('./operations/${operationFile}.js'),
  },
})
`,
    [`operations/${operationFile}.ts`]: `import db from '@adonisjs/lucid/services/db'
import { BaseOperation } from '#core/rpc/base_operation'

/** Reports the plugin's version and how many items it stores. */
export default class ${operation[0].toUpperCase()}${operation.slice(1)} extends BaseOperation {
  static operation = '${operation}'

  async handle() {
    const row = await db.from('${table}').count('* as total').first()
    return { plugin: '${id}', items: Number(row?.total ?? 0) }
  }
}
`,
    [`database/migrations/${stamp}_create_${table}_table.ts`]: `import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = '${table}'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.increments('id')
      table.string('name', 191).notNullable()
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.timestamp('created_at').notNullable()
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
`,
    [`tests/functional/${operationFile}.spec.ts`]: `import { test } from '@japa/runner'
import { rpc } from '#tests/helpers/rpc'
import { login, makeUser } from '#tests/helpers/users'

test.group('${id}: ${operation}', () => {
  test('answers the item count to a signed-in user', async ({ assert }) => {
    const session = await login(await makeUser())
    const answer = await rpc({ req: '${operation}', o_u: session.o_u, sesskey: session.sesskey })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.equal(answer.body.plugin, '${id}')
    assert.equal(answer.body.items, 0)
  })

  test('refuses a caller without a session', async ({ assert }) => {
    const answer = await rpc({ req: '${operation}', o_u: 'nobody' })
    assert.equal(answer.body.status, 'nok')
    assert.equal(answer.body.errorCode, 'MISSING_PARAMETER')
  })
})
`,
    'README.md': `# ${id} plugin

What it owns: the \`${table}\` table.

## Operations
- \`${operation}\`: the plugin's version and item count (session required).

## Socket types, system messages, jobs
None yet.

## Events
Emits: none. Consumes: none.
`,
  }

  for (const [relative, content] of Object.entries(files)) {
    const target = join(folder, relative)
    await mkdir(join(target, '..'), { recursive: true })
    await writeFile(target, content)
  }

  const entries = listMatch[1].trim().replace(/,\s*$/, '')
  const updatedList = `enabled: [${entries ? `${entries}, ` : ''}'${id}']`
  await writeFile(configPath, config.replace(listMatch[0], updatedList))

  return { id, operation, files: Object.keys(files).map((relative) => `plugins/${id}/${relative}`) }
}
