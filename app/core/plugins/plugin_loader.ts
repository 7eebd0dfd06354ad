import type { PluginManifest } from './define_plugin.js'
import { PluginBootError, PluginRegistry } from './plugin_registry.js'
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
