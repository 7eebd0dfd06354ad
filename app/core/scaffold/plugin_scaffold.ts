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

/** Where a plugin is written and enabled; by default under the application's root. */
export interface ScaffoldPaths {
  /** The folder holding one folder per plugin (`<root>/plugins`). */
  pluginsDir: string
  /** The enabled-plugins list the id is appended to (`<root>/config/plugins.ts`). */
  configFile: string
}

/**
 * Writes a working plugin folder in the house style (docs/CONTRIBUTING.md):
 * a manifest, a provider class binding the plugin's service by class, the
 * service (the only place of domain logic and SQL), one operation receiving
 * it through `@inject()` and validating its input with the '#core/rpc/wire'
 * rules, its entry in the API reference (reference.ts), one migration, one
 * functional test, a console page (admin/) and a README; then appends the id
 * to config/plugins.ts. Refuses an invalid id or an existing folder.
 * `root` is the application root, or explicit paths (tests write elsewhere).
 */
export async function scaffoldPlugin(
  root: string | ScaffoldPaths,
  id: string,
  now = new Date()
): Promise<ScaffoldResult> {
  if (!PLUGIN_ID.test(id)) {
    throw new Error(
      `Invalid plugin name "${id}": use 2-40 lower-case letters, digits and underscores, starting with a letter`
    )
  }
  const { pluginsDir, configFile } =
    typeof root === 'string'
      ? { pluginsDir: join(root, 'plugins'), configFile: join(root, 'config', 'plugins.ts') }
      : root
  const folder = join(pluginsDir, id)
  if (existsSync(folder)) throw new Error(`plugins/${id} already exists`)

  const config = await readFile(configFile, 'utf8')
  const listMatch = config.match(/enabled:\s*\[([^\]]*)\]/)
  if (!listMatch)
    throw new Error('config/plugins.ts has no `enabled: [...]` list to add the plugin to')

  const Name = pascal(id)
  const operation = `get${Name}Status`
  const Operation = `${operation[0].toUpperCase()}${operation.slice(1)}`
  const operationFile = snake(operation)
  const Service = `${Name}Service`
  const serviceFile = `${id}_service`
  const serviceVar = `${Name[0].toLowerCase()}${Name.slice(1)}`
  const table = `${id}_items`
  const stamp = now.getTime()

  const files: Record<string, string> = {
    'plugin.ts': `import { definePlugin } from '#core/plugins/define_plugin'

/** TODO: what ${id} owns (see README.md). */
export default definePlugin({
  id: '${id}',
  version: '0.1.0',
  description: 'TODO: what ${id} owns',
  operations: {
    ${operation}: () => import('./operations/${operationFile}.js'),
  },
  provider: () => import('./provider.js'),
  // What the API reference (/live/openapi.json, /docs) and the MCP tools say of the operations.
  reference: () => import('./reference.js'),
  // A page of the admin console at /admin/${id}, listed in its navigation.
  admin: {
    nav: [{ label: '${Name}' }],
    routes: () => import('./admin/routes.js'),
  },
})
`,
    'reference.ts': `import { defineReference } from '#core/reference/types'

/**
 * What the API reference (/live/openapi.json, /docs) and the MCP tools say of
 * ${id}'s operations (docs/api-reference.md). Parameters, types and limits come
 * from each operation's validator: write only what the code cannot say. Every
 * registered operation needs an entry with a summary, a description, the
 * fields it answers, an example its validator accepts and the nok codes it
 * answers (tests/unit/reference/reference_documents.spec.ts).
 */
export default defineReference({
  operations: {
    ${operation}: {
      summary: "The ${id} plugin's item count",
      description:
        'Answers the plugin id and how many items the ${id} plugin stores: all of them, or with mine only those of the caller.',
      returns: { plugin: 'the plugin id, ${id}', items: 'the number of items counted' },
      example: { mine: 'yes' },
      errors: ['INVALID_PARAMETER'],
    },
  },
})
`,
    'admin/routes.ts': `import type { PluginAdminRoutes } from '#core/plugins/define_plugin'
import app from '@adonisjs/core/services/app'
import { ${Service} } from '../services/${serviceFile}.js'

/**
 * The plugin's console pages, mounted at /admin/${id} inside the console's
 * group (session, CSRF, a signed-in administrator). A page named
 * '${id}/<page>' is the React component in admin/pages/<page>.tsx.
 */
const register${Name}Console: PluginAdminRoutes = (router) => {
  router
    .get('/', async ({ inertia }) => {
      const service = await app.container.make(${Service})
      return inertia.render('${id}/index', { items: await service.countItems(null) })
    })
    .as('index')
}

export default register${Name}Console
`,
    'admin/pages/index.tsx': `import { Head } from '@inertiajs/react'
import { Card } from '@console/components/ui'

/** The ${id} plugin's console page (its props come from admin/routes.ts). */
export default function ${Name}Index({ items }: { items: number }) {
  return (
    <>
      <Head title="${Name}" />
      <h1>${Name}</h1>
      <Card title="Items">
        <p>{items} item(s) stored by the ${id} plugin.</p>
      </Card>
    </>
  )
}
`,
    'provider.ts': `import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import { ${Service} } from './services/${serviceFile}.js'

/**
 * The ${id} services, bound by class as container singletons (each built
 * once, from its @inject() constructor): operations receive them by type.
 */
export default class ${Name}Provider {
  constructor(protected app: ApplicationService) {}

  register() {
    bindSingletons(this.app.container, [${Service}])
  }
}
`,
    [`services/${serviceFile}.ts`]: `import db from '@adonisjs/lucid/services/db'

/**
 * What the ${id} plugin does. Operations, socket handlers and commands are
 * thin callers of these methods. Dependencies (core services such as
 * UserService, or other services of this plugin) come through an \`@inject()\`
 * constructor.
 */
export class ${Service} {
  /** How many items are stored: all of them, or those of one user. */
  async countItems(userId: number | null) {
    const query = db.from('${table}')
    if (userId !== null) query.where('user_id', userId)
    const row = await query.count('* as total').first()
    return Number(row?.total ?? 0)
  }
}
`,
    [`operations/${operationFile}.ts`]: `import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag } from '#core/rpc/wire'
import { ${Service} } from '../services/${serviceFile}.js'

const validator = vine.compile(
  vine.object({
    /** Count only the caller's items. */
    mine: flag().optional(),
  })
)

/** Reports the plugin's id and how many items it stores (all, or the caller's). */
@inject()
export default class ${Operation} extends BaseOperation {
  static operation = '${operation}'
  static validator = validator

  constructor(private ${serviceVar}: ${Service}) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const items = await this.${serviceVar}.countItems(input.mine ? ctx.actor!.user.id : null)
    return { plugin: '${id}', items }
  }
}
`,
    [`database/migrations/${stamp}_create_${table}_table.ts`]: `import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = '${table}'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.increments('id')
      table.integer('user_id').unsigned().notNullable().index()
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

  test('with mine=yes, counts only the items of the caller', async ({ assert }) => {
    const session = await login(await makeUser())
    const answer = await rpc({
      req: '${operation}',
      o_u: session.o_u,
      sesskey: session.sesskey,
      mine: 'yes',
    })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.equal(answer.body.items, 0)
  })

  test('refuses a mine that is not a boolean', async ({ assert }) => {
    const session = await login(await makeUser())
    const answer = await rpc({
      req: '${operation}',
      o_u: session.o_u,
      sesskey: session.sesskey,
      mine: 'maybe',
    })
    assert.equal(answer.body.status, 'nok')
    assert.equal(answer.body.errorCode, 'INVALID_PARAMETER')
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

- \`${operation}\` (\`mine\`: optional boolean): the plugin's id and its item count, all
  items or only the caller's (session required).

API reference: \`reference.ts\` describes each operation for /live/openapi.json, /docs and the
MCP tools (docs/api-reference.md); add an entry with every new operation.

## Services

- \`${Service}\` (\`services/${serviceFile}.ts\`), bound by class in \`provider.ts\`.

## Console

- /admin/${id} (\`admin/routes.ts\`, page \`admin/pages/index.tsx\`), in the console's navigation.

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
  await writeFile(configFile, config.replace(listMatch[0], updatedList))

  return { id, operation, files: Object.keys(files).map((relative) => `plugins/${id}/${relative}`) }
}
