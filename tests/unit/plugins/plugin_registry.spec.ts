import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { RouterFactory } from '@adonisjs/core/factories/http'
import type { Router } from '@adonisjs/core/http'
import { loadPlugins, registerPluginRoutes } from '#core/plugins/plugin_loader'
import { definePlugin, type PluginManifest, type PluginRoutes } from '#core/plugins/define_plugin'

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

/** A router of its own: the application's router must not receive test routes. */
const freshRouter = () => new RouterFactory().create()
const routesOf = (register: PluginRoutes) => () => Promise.resolve({ default: register })

async function bootRoutes(manifests: Record<string, PluginManifest>, router: Router) {
  const registry = await loadPlugins(Object.keys(manifests), importerOf(manifests))
  await registerPluginRoutes(registry, router, app)
  return registry
}

test.group('plugin routes (manifest `routes`)', () => {
  test('the routes a plugin registers are recorded with their methods and full pattern', async ({
    assert,
  }) => {
    const router = freshRouter()
    const registry = await bootRoutes(
      {
        alpha: definePlugin({
          id: 'alpha',
          version: '1',
          routes: routesOf((r, { pluginId }) => {
            r.group(() => {
              r.post('/login', () => pluginId)
              r.route('/authorize', ['GET', 'POST'], () => pluginId)
              r.group(() => r.get('/me', () => pluginId)).prefix('/api')
            }).prefix('/alpha')
          }),
        }),
        beta: definePlugin({ id: 'beta', version: '1' }),
      },
      router
    )
    assert.deepEqual(registry.routesOf('alpha'), [
      { methods: ['POST'], pattern: '/alpha/login' },
      { methods: ['GET', 'POST'], pattern: '/alpha/authorize' },
      { methods: ['GET', 'HEAD'], pattern: '/alpha/api/me' },
    ])
    assert.deepEqual(registry.routesOf('beta'), [])
    assert.equal(registry.routes.get('GET /alpha/api/me')?.pluginId, 'alpha')
    // Registered on the router given, before it commits: they are served like any route.
    router.commit()
    assert.equal(router.match('/alpha/api/me', 'GET')?.route.pattern, '/alpha/api/me')
  })

  test('two plugins registering the same method and path is a boot error naming both', async ({
    assert,
  }) => {
    const claim = (id: string) =>
      definePlugin({
        id,
        version: '1',
        routes: routesOf((r) => {
          r.post(`/${id}/own`, () => id)
          r.post('/shared/login', () => id)
        }),
      })
    await assert.rejects(
      () => bootRoutes({ alpha: claim('alpha'), beta: claim('beta') }, freshRouter()),
      /The route "POST \/shared\/login" is claimed by both plugin "alpha" and plugin "beta"/
    )
  })

  test('the same path under different methods is no conflict', async ({ assert }) => {
    const registry = await bootRoutes(
      {
        alpha: definePlugin({
          id: 'alpha',
          version: '1',
          routes: routesOf((r) => void r.get('/shared', () => 'a')),
        }),
        beta: definePlugin({
          id: 'beta',
          version: '1',
          routes: routesOf((r) => void r.post('/shared', () => 'b')),
        }),
      },
      freshRouter()
    )
    assert.equal(registry.routes.get('GET /shared')?.pluginId, 'alpha')
    assert.equal(registry.routes.get('POST /shared')?.pluginId, 'beta')
  })

  test('the auth service declares every {auth_url} route in its manifest', async ({ assert }) => {
    const { default: authConfig } = await import('#plugins/auth_service/config')
    const { default: manifest } = await import('#plugins/auth_service/plugin')
    const registry = await bootRoutes({ auth_service: manifest }, freshRouter())
    const listed = registry.routesOf('auth_service').map((route) => route.pattern)
    const prefix = authConfig.prefix
    for (const path of [
      '/login',
      '/login/2fa',
      '/login/2fa/setup/confirm',
      '/token/refresh',
      '/logout',
      '/password/change',
      '/authorize',
      '/api/ping',
      '/api/sessions/revoke-others',
      '/api/sessions',
      '/api/me',
    ])
      assert.include(listed, `${prefix}${path}`)
    assert.isTrue(listed.every((pattern) => pattern.startsWith(`${prefix}/`)))
  })
})
