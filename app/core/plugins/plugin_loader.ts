import type { ApplicationService } from '@adonisjs/core/types'
import type { Router } from '@adonisjs/core/http'
import type { PluginManifest } from './define_plugin.js'
import { PluginBootError, PluginRegistry, type PluginRoute } from './plugin_registry.js'
import coreManifest from '#core/operations/manifest'

export type ManifestImporter = (id: string) => Promise<{ default: PluginManifest }>

/** The default importer: plugins/<id>/plugin.ts through the #plugins alias. */
export const importPluginManifest: ManifestImporter = (id) => import(`#plugins/${id}/plugin`)

/**
 * Builds the registry from the kernel's own manifest and the enabled plugins,
 * in list order. Any inconsistency is a boot error that names the plugins.
 */
export async function loadPlugins(enabled: string[], importer = importPluginManifest) {
  const registry = new PluginRegistry()
  registry.register(coreManifest, null)
  for (const id of enabled) {
    let manifest: PluginManifest
    try {
      const module = await importer(id)
      manifest = module.default
    } catch (error) {
      throw new PluginBootError(
        `Plugin "${id}" could not be loaded from plugins/${id}/plugin.ts: ${(error as Error).message}`
      )
    }
    registry.register(manifest, id)
  }
  return registry
}

type RouterEntry = Router['routes'][number]

/** Every route of a router entry (a route, a group, a resource, a brisk route), prefixes applied. */
function flatten(entry: RouterEntry): PluginRoute[] {
  if ('routes' in entry) return entry.routes.flatMap((child) => flatten(child as RouterEntry))
  const route = 'route' in entry ? entry.route : entry
  if (!route) return []
  const { methods, pattern } = route.toJSON()
  return [{ methods: [...methods], pattern }]
}

/**
 * Calls each enabled plugin's `routes` function (PluginManifest.routes) on the
 * router, in list order, and records what each one registered in the
 * registry. Runs at boot, before the router commits its routes.
 */
export async function registerPluginRoutes(
  registry: PluginRegistry,
  router: Router,
  app: ApplicationService
) {
  for (const manifest of registry.plugins) {
    if (!manifest.routes) continue
    const { default: routes } = await manifest.routes()
    const before = router.routes.length
    await routes(router, { app, pluginId: manifest.id })
    registry.claimRoutes(manifest.id, router.routes.slice(before).flatMap(flatten))
  }
}
