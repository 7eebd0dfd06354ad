import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import app from '@adonisjs/core/services/app'
import * as prettier from 'prettier'
import db from '@adonisjs/lucid/services/db'
import type { BaseSchema } from '@adonisjs/lucid/schema'
import coreManifest from '#core/operations/manifest'
import quireConfig from '#config/quire'
import type { OperationClass } from '#core/rpc/base_operation'
import type { PluginManifest } from '#core/plugins/define_plugin'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { Dispatcher } from '#core/rpc/dispatcher'
import { AccessService } from '#core/services/access_service'
import { UserService } from '#core/services/user_service'
import { scaffoldPlugin } from '#core/scaffold/plugin_scaffold'
import { buildCatalogue, missingDocs } from '#core/reference/catalogue'
import { buildOpenApi } from '#core/reference/openapi'
import { validateWire } from '#core/rpc/wire'
import { ERROR_CATALOGUE } from '#core/rpc/errors'
import { validate as validateOpenApi } from '@scalar/openapi-parser'
import { TEST_PASSWORD, makeUser } from '#tests/helpers/users'

const ENABLED = "const plugins = {\n  enabled: ['books', 'tables'],\n}\nexport default plugins\n"

async function fakeRoot(parent = tmpdir()) {
  await mkdir(parent, { recursive: true })
  const root = await mkdtemp(join(parent, 'quire-scaffold-'))
  await mkdir(join(root, 'config'))
  await writeFile(join(root, 'config/plugins.ts'), ENABLED)
  return root
}

test.group('make:plugin scaffold', (group) => {
  let root = ''
  group.each.setup(async () => {
    root = await fakeRoot()
    return () => rm(root, { recursive: true, force: true })
  })

  test('writes a manifest, a provider, a service, an operation, a migration, a test and a README, and enables the plugin', async ({
    assert,
  }) => {
    const result = await scaffoldPlugin(root, 'polls', new Date(1_700_000_000_000))
    assert.equal(result.operation, 'getPollsStatus')
    assert.sameMembers(result.files, [
      'plugins/polls/plugin.ts',
      'plugins/polls/provider.ts',
      'plugins/polls/services/polls_service.ts',
      'plugins/polls/operations/get_polls_status.ts',
      'plugins/polls/database/migrations/1700000000000_create_polls_items_table.ts',
      'plugins/polls/tests/functional/get_polls_status.spec.ts',
      'plugins/polls/README.md',
      'plugins/polls/reference.ts',
      'plugins/polls/admin/routes.ts',
      'plugins/polls/admin/pages/index.tsx',
    ])
    for (const file of result.files) assert.isTrue(existsSync(join(root, file)), file)
    // Formatted as the project formats (`npx prettier --check` passes on a new plugin).
    const options = await prettier.resolveConfig(app.makePath('package.json'))
    const unformatted: string[] = []
    for (const file of result.files) {
      const source = await readFile(join(root, file), 'utf8')
      if (!(await prettier.check(source, { ...options, filepath: file }))) unformatted.push(file)
    }
    assert.deepEqual(unformatted, [])
    assert.include(
      await readFile(join(root, 'config/plugins.ts'), 'utf8'),
      "enabled: ['books', 'tables', 'polls']"
    )
  })

  test('writes where it is told: a plugins folder and a config file of their own', async ({
    assert,
  }) => {
    const pluginsDir = join(root, 'elsewhere')
    const configFile = join(root, 'config/plugins.ts')
    await scaffoldPlugin({ pluginsDir, configFile }, 'polls')
    assert.isTrue(existsSync(join(pluginsDir, 'polls/plugin.ts')))
    assert.isFalse(existsSync(join(root, 'plugins')))
    assert.include(await readFile(configFile, 'utf8'), "'polls']")
  })

  test('refuses an invalid name or an existing folder', async ({ assert }) => {
    await assert.rejects(() => scaffoldPlugin(root, 'Bad-Name'), /Invalid plugin name/)
    await scaffoldPlugin(root, 'polls')
    await assert.rejects(() => scaffoldPlugin(root, 'polls'), /already exists/)
  })
})

/**
 * The plugin make:plugin writes, booted as the application boots a plugin:
 * its manifest registered next to the kernel's, its provider's register()
 * run, its migration run, and its operation dispatched through the real
 * Dispatcher, after a real createAppkey -> createOauthkey -> createSesskey.
 * It is written under the application's tmp/ folder so that its '#core/...'
 * imports resolve as they do in plugins/.
 */
test.group('make:plugin: the generated plugin boots and answers', (group) => {
  const id = `scaffold_${randomBytes(4).toString('hex')}`
  let root = ''
  let manifest: PluginManifest
  let dispatcher: Dispatcher
  let registry: PluginRegistry
  let Migration: (new (...args: ConstructorParameters<typeof BaseSchema>) => BaseSchema) | null =
    null
  let operation = ''

  group.setup(async () => {
    root = await fakeRoot(app.makePath('tmp'))
    const scaffolded = await scaffoldPlugin(root, id)
    operation = scaffolded.operation
    const folder = join(root, 'plugins', id)
    const imported = await import(pathToFileURL(join(folder, 'plugin.ts')).href)
    manifest = imported.default

    registry = new PluginRegistry()
    registry.register(coreManifest, null)
    registry.register(manifest, id)

    const { default: Provider } = await manifest.provider!()
    await new Provider(app).register?.()

    const migrations = join(folder, 'database/migrations')
    const [file] = await readdir(migrations)
    const schema = await import(pathToFileURL(join(migrations, file)).href)
    await new schema.default(db.connection(), file, false).execUp()
    Migration = schema.default

    dispatcher = new Dispatcher(
      app,
      registry,
      await app.container.make(AccessService),
      await app.container.make(UserService),
      await app.container.make('logger'),
      quireConfig
    )
    return async () => {
      if (Migration) await new Migration(db.connection(), file, false).execDown()
      await rm(root, { recursive: true, force: true })
    }
  })

  const call = (params: Record<string, unknown>) =>
    dispatcher.dispatch({ params, files: [], ip: '127.0.0.1' })

  /** A signed-in user through the real key sequence, on the same dispatcher. */
  async function signIn() {
    const user = await makeUser()
    const appkey = await call({ req: 'createAppkey', appname: 'scaffold-test' })
    const oauth = await call({
      req: 'createOauthkey',
      appkey: appkey.appkey,
      login: user.email,
      pwd: TEST_PASSWORD,
    })
    const sess = await call({ req: 'createSesskey', o_u: oauth.o_u, oauthkey: oauth.oauthkey })
    if (sess.status !== 'ok') throw new Error(`sign-in failed: ${JSON.stringify(sess)}`)
    return { user, o_u: oauth.o_u as string, sesskey: sess.sesskey as string }
  }

  test('the generated operation follows the house style', async ({ assert }) => {
    const { default: Operation } = (await manifest.operations![operation]()) as {
      default: OperationClass & {
        containerInjections?: Record<string, { dependencies: unknown[] }>
      }
    }
    assert.equal(Operation.operation, operation)
    assert.equal(Operation.name, operation[0].toUpperCase() + operation.slice(1))
    assert.isFunction(Operation.validator?.validate, 'static validator')
    const dependencies = Operation.containerInjections?._constructor?.dependencies ?? []
    assert.lengthOf(dependencies, 1, '@inject() constructor receiving the plugin service')
    const Service = dependencies[0] as { name: string; prototype: Record<string, unknown> }
    assert.match(Service.name, /Service$/)
    assert.isFunction(Service.prototype.countItems)
  })

  test('its operation answers through the Dispatcher, counting with the generated service', async ({
    assert,
  }) => {
    const session = await signIn()
    const other = await makeUser()
    const table = `${id}_items`
    const before = await call({ req: operation, o_u: session.o_u, sesskey: session.sesskey })
    assert.deepInclude(before, { status: 'ok', req: operation, plugin: id })

    await db.table(table).multiInsert([
      { user_id: session.user.id, name: 'mine', sstamp: 0, created_at: new Date() },
      { user_id: other.id, name: 'theirs', sstamp: 0, created_at: new Date() },
    ])
    const all = await call({ req: operation, o_u: session.o_u, sesskey: session.sesskey })
    assert.deepInclude(all, { status: 'ok', items: (before.items as number) + 2 })
    const mine = await call({
      req: operation,
      o_u: session.o_u,
      sesskey: session.sesskey,
      mine: 'yes',
    })
    assert.deepInclude(mine, { status: 'ok', items: 1 })
  })

  test('its operation validates with the wire rules and requires a session', async ({ assert }) => {
    const session = await signIn()
    const refused = await call({
      req: operation,
      o_u: session.o_u,
      sesskey: session.sesskey,
      mine: 'maybe',
    })
    assert.deepInclude(refused, { status: 'nok', errorCode: 'INVALID_PARAMETER' })
    const anonymous = await call({ req: operation, o_u: session.o_u })
    assert.deepInclude(anonymous, { status: 'nok', errorCode: 'MISSING_PARAMETER' })
  })

  test('its reference.ts documents the operation as the API reference requires', async ({
    assert,
  }) => {
    // The checks of tests/unit/reference/reference_documents.spec.ts, on the kernel plus the
    // generated plugin: an entry with summary, description, example and nok codes, an example
    // its validator accepts, codes of the catalogue, and a valid OpenAPI document.
    assert.isFunction(manifest.reference, 'the manifest declares reference')
    const catalogue = await buildCatalogue(registry)
    assert.deepEqual(missingDocs(catalogue), [])
    const entry = catalogue.operations.find((candidate) => candidate.name === operation)!
    assert.equal(entry.pluginId, id)
    await validateWire(entry.Operation.validator!, entry.doc!.example)
    for (const code of entry.errors) assert.property(ERROR_CATALOGUE, code)
    const document = buildOpenApi(catalogue, {
      prefix: '/live',
      apiVersion: quireConfig.apiVersion,
      createdVNB: 'live-test',
    })
    const result = await validateOpenApi(structuredClone(document))
    assert.isTrue(result.valid, JSON.stringify(result.errors?.slice(0, 5)))
    const described = (document.paths as Record<string, any>)[`/live/api.php#${operation}`]?.post
    assert.equal(described.summary, `The ${id} plugin's item count`)
  })
})
