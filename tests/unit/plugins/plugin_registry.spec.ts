import { test } from '@japa/runner'
import { loadPlugins } from '#core/plugins/plugin_loader'
import { definePlugin, type PluginManifest } from '#core/plugins/define_plugin'

const operation = () => Promise.resolve({ default: class {} as any })
const handler = () => Promise.resolve({ default: {} })

function importerOf(manifests: Record<string, PluginManifest>) {
  return async (id: string) => {
    if (!manifests[id]) throw new Error('Cannot find module')
    return { default: manifests[id] }
  }
}

test.group('plugin loader', () => {
  test('registers operations, socket types and system messages by plugin, in list order', async ({
    assert,
  }) => {
    const registry = await loadPlugins(
      ['alpha', 'beta'],
      importerOf({
        alpha: definePlugin({
          id: 'alpha',
          version: '1',
          operations: { alphaOp: operation },
          socket: { 21: handler },
        }),
        beta: definePlugin({
          id: 'beta',
          version: '1',
          dependsOn: ['alpha'],
          systemMessages: { betaMsg: handler },
        }),
      })
    )
    assert.deepEqual(
      registry.plugins.map((plugin) => plugin.id),
      ['core', 'alpha', 'beta']
    )
    assert.equal(registry.operations.get('alphaOp')?.pluginId, 'alpha')
    assert.equal(registry.operations.get('getUserInfo')?.pluginId, 'core')
    assert.equal(registry.socketTypes.get(21)?.pluginId, 'alpha')
    assert.equal(registry.systemMessages.get('betaMsg')?.pluginId, 'beta')
  })

  test('an id that does not match its folder is a boot error', async ({ assert }) => {
    await assert.rejects(
      () =>
        loadPlugins(['alpha'], importerOf({ alpha: definePlugin({ id: 'other', version: '1' }) })),
      /plugins\/alpha.*declares id "other"/
    )
  })

  test('a dependency listed later (or missing) is a boot error', async ({ assert }) => {
    const manifests = {
      alpha: definePlugin({ id: 'alpha', version: '1', dependsOn: ['beta'] }),
      beta: definePlugin({ id: 'beta', version: '1' }),
    }
    await assert.rejects(
      () => loadPlugins(['alpha', 'beta'], importerOf(manifests)),
      /"alpha" depends on "beta"/
    )
  })

  test('a duplicate {$self} names both plugins')
    .with(['operation', 'socket type', 'system message'])
    .run(async ({ assert }, kind) => {
      const claim = (id: string) =>
        definePlugin({
          id,
          version: '1',
          ...(kind === 'operation' ? { operations: { sameName: operation } } : {}),
          ...(kind === 'socket type' ? { socket: { 42: handler } } : {}),
          ...(kind === 'system message' ? { systemMessages: { sameMsg: handler } } : {}),
        })
      await assert.rejects(
        () =>
          loadPlugins(
            ['alpha', 'beta'],
            importerOf({ alpha: claim('alpha'), beta: claim('beta') })
          ),
        new RegExp(`The ${kind} "[^"]+" is claimed by both plugin "alpha" and plugin "beta"`)
      )
    })

  test('a plugin may not take over a kernel operation', async ({ assert }) => {
    const manifests = {
      alpha: definePlugin({ id: 'alpha', version: '1', operations: { getUserInfo: operation } }),
    }
    await assert.rejects(
      () => loadPlugins(['alpha'], importerOf(manifests)),
      /claimed by both plugin "core" and plugin "alpha"/
    )
  })

  test('a missing plugin folder is a boot error naming it', async ({ assert }) => {
    await assert.rejects(
      () => loadPlugins(['ghost'], importerOf({})),
      /Plugin "ghost" could not be loaded/
    )
  })

  test('the enabled plugins of config/plugins.ts load', async ({ assert }) => {
    const { default: plugins } = await import('#config/plugins')
    const registry = await loadPlugins(plugins.enabled)
    assert.includeMembers(
      registry.plugins.map((plugin) => plugin.id),
      ['books', 'tables', 'media', 'gateways', 'webhooks']
    )
  })
})
