import type { HttpContext } from '@adonisjs/core/http'
import app from '@adonisjs/core/services/app'
import { PluginRegistry } from '#core/plugins/plugin_registry'

/** GET /admin/plugins: what `node ace plugin:list` prints, plus each plugin's console pages. */
export default class PluginsController {
  async index({ inertia }: HttpContext) {
    const registry = await app.container.make(PluginRegistry)
    const claimsOf = <K>(map: Map<K, { pluginId: string }>, id: string) =>
      [...map.entries()].filter(([, claim]) => claim.pluginId === id).map(([key]) => String(key))
    return inertia.render('plugins', {
      plugins: registry.plugins.map((plugin) => ({
        id: plugin.id,
        version: plugin.version,
        description: plugin.description ?? '',
        dependsOn: plugin.dependsOn ?? [],
        operations: claimsOf(registry.operations, plugin.id).sort(),
        socketTypes: claimsOf(registry.socketTypes, plugin.id),
        systemMessages: claimsOf(registry.systemMessages, plugin.id),
        jobs: claimsOf(registry.jobs, plugin.id),
        routes: registry
          .routesOf(plugin.id)
          .map(
            (route) => `${route.methods.filter((m) => m !== 'HEAD').join('|')} ${route.pattern}`
          ),
        consolePages: (plugin.admin?.nav ?? []).map((entry) => ({
          label: entry.label,
          href: `/admin/${plugin.id}${entry.path ?? ''}`,
        })),
      })),
    })
  }
}
