import { test } from '@japa/runner'
import { basename } from 'node:path'
import coreManifest from '#core/operations/manifest'
import plugins from '#config/plugins'
import { importPluginManifest } from '#core/plugins/plugin_loader'
import type { LazyDefault, PluginManifest } from '#core/plugins/define_plugin'
import { BaseOperation } from '#core/rpc/base_operation'
import { SocketHandler, SystemMessageHandler } from '#core/socket/socket_handler'

/**
 * The naming rules a newcomer relies on to find code by its wire name
 * (docs/CONTRIBUTING.md): the manifest key, the class's static name, the class
 * name and the file name agree, and every socket entry declares the validator
 * the socket server runs. Every entry of the kernel's manifest and of every
 * enabled plugin's manifest is imported and checked.
 */

/** getOrCreateSessKey -> get_or_create_sess_key */
const snakeCase = (key: string) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
/** getOrCreateSessKey -> GetOrCreateSessKey */
const pascalCase = (key: string) => key[0].toUpperCase() + key.slice(1)
/** get_all_books.ts -> GetAllBooks */
const pascalOfFile = (file: string) =>
  file.replace(/(^|_)([a-z0-9])/g, (_, __, letter: string) => letter.toUpperCase())

/**
 * The file a lazy manifest entry imports, without folder and extension, read
 * from the entry's source (`() => import('./operations/get_all_books.js')`):
 * an entry must stay a plain lazy import for the name to be checkable.
 */
function fileOf(load: LazyDefault<unknown>) {
  const specifier = /import\(\s*['"`]([^'"`]+)['"`]\s*\)/.exec(load.toString())?.[1]
  if (!specifier) throw new Error(`Not a plain lazy import: ${load.toString()}`)
  return basename(specifier).replace(/\.(js|ts)$/, '')
}

const hasValidator = (Class: { validator?: unknown }) =>
  typeof (Class.validator as { validate?: unknown } | undefined)?.validate === 'function'

interface Entry {
  plugin: string
  key: string
  load: LazyDefault<any>
}

const manifests: PluginManifest[] = [coreManifest]
for (const id of plugins.enabled) {
  const { default: manifest } = await importPluginManifest(id)
  manifests.push(manifest)
}

const entriesOf = (kind: 'operations' | 'socket' | 'systemMessages' | 'jobs') =>
  manifests.flatMap((manifest) =>
    Object.entries(manifest[kind] ?? {}).map(([key, load]): Entry => ({
      plugin: manifest.id,
      key,
      load: load as LazyDefault<any>,
    }))
  )

test.group('manifest contract: operations', () => {
  test('{plugin} {key}: static operation, class name and file name match the key')
    .with(entriesOf('operations'))
    .run(async ({ assert }, { key, load }) => {
      const { default: Operation } = await load()
      assert.isTrue(Operation.prototype instanceof BaseOperation, 'extends BaseOperation')
      assert.equal(Operation.operation, key, 'static operation')
      assert.equal(Operation.name, pascalCase(key), 'class name')
      assert.equal(fileOf(load), snakeCase(key), 'file name')
    })
})

test.group('manifest contract: socket message types', () => {
  test('{plugin} type {key}: static type matches the key and a validator is declared')
    .with(entriesOf('socket'))
    .run(async ({ assert }, { key, load }) => {
      const { default: Handler } = await load()
      assert.isTrue(Handler.prototype instanceof SocketHandler, 'extends SocketHandler')
      assert.strictEqual(Handler.type, Number(key), 'static type')
      assert.equal(Handler.name, pascalOfFile(fileOf(load)), 'class name matches the file name')
      assert.isTrue(hasValidator(Handler), 'static validator (a compiled VineJS validator)')
    })
})

test.group('manifest contract: system messages', () => {
  test(
    '{plugin} {key}: static msg, class name and file name match the key; a validator is declared'
  )
    .with(entriesOf('systemMessages'))
    .run(async ({ assert }, { key, load }) => {
      const { default: Handler } = await load()
      assert.isTrue(
        Handler.prototype instanceof SystemMessageHandler,
        'extends SystemMessageHandler'
      )
      assert.equal(Handler.msg, key, 'static msg')
      assert.equal(Handler.name, pascalCase(key), 'class name')
      assert.equal(fileOf(load), snakeCase(key), 'file name')
      assert.isTrue(hasValidator(Handler), 'static validator (a compiled VineJS validator)')
    })
})

test.group('manifest contract: jobs', () => {
  test('{plugin} {key}: keyed <plugin>.<job>, a handler function')
    .with(entriesOf('jobs'))
    .run(async ({ assert }, { plugin, key, load }) => {
      assert.match(key, /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/, 'lower snake_case <plugin>.<job>')
      assert.equal(key.split('.')[0], plugin, 'prefixed with the id of the plugin declaring it')
      const { default: handler } = await load()
      assert.isFunction(handler)
    })
})

test.group('manifest contract: coverage', () => {
  test('every enabled plugin and the kernel are checked', ({ assert }) => {
    assert.deepEqual(
      manifests.map((manifest) => manifest.id),
      ['core', ...plugins.enabled]
    )
    assert.isAbove(entriesOf('operations').length, 0)
    assert.isAbove(entriesOf('socket').length, 0)
    assert.isAbove(entriesOf('systemMessages').length, 0)
    assert.isAbove(entriesOf('jobs').length, 0)
  })
})
