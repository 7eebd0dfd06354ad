import type { ApplicationService } from '@adonisjs/core/types'
import type { PluginRegistry } from '#core/plugins/plugin_registry'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'quire.plugins': PluginRegistry
  }
}

/**
 * Loads config/plugins.ts at boot: a misconfigured plugin list (wrong id,
 * dependency out of order, a name claimed twice) stops the boot with an error
 * naming the plugins involved.
 */
export default class PluginsProvider {
  private registry: PluginRegistry | null = null

  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton('quire.plugins', async () => {
      if (!this.registry)
        throw new Error('Plugins are not loaded yet: resolve quire.plugins after boot')
      return this.registry
    })
  }

  async boot() {
    const { loadPlugins } = await import('#core/plugins/plugin_loader')
    const { default: plugins } = await import('#config/plugins')
    this.registry = await loadPlugins(plugins.enabled)
    for (const manifest of this.registry.plugins) {
      if (!manifest.provider) continue
      const { default: hooks } = await manifest.provider()
      await hooks.boot?.()
    }
  }

  async shutdown() {
    for (const manifest of [...(this.registry?.plugins ?? [])].reverse()) {
      if (!manifest.provider) continue
      const { default: hooks } = await manifest.provider()
      await hooks.shutdown?.()
    }
  }
}
