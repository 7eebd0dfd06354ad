import type { ApplicationService } from '@adonisjs/core/types'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import type { PluginProvider } from '#core/plugins/define_plugin'

/**
 * Loads config/plugins.ts at boot: a misconfigured plugin list (wrong id,
 * dependency out of order, a name claimed twice) stops the boot with an error
 * naming the plugins involved. Then forwards the application's phases to each
 * plugin's provider class, in list order (shutdown in reverse), and registers
 * the HTTP routes the manifests declare.
 */
export default class PluginsProvider {
  private registry: PluginRegistry | null = null
  private providers: PluginProvider[] = []

  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton(PluginRegistry, async () => {
      if (!this.registry)
        throw new Error('Plugins are not loaded yet: resolve PluginRegistry after boot')
      return this.registry
    })
  }

  async boot() {
    const { loadPlugins, registerPluginRoutes } = await import('#core/plugins/plugin_loader')
    const { default: plugins } = await import('#config/plugins')
    this.registry = await loadPlugins(plugins.enabled)
    for (const manifest of this.registry.plugins) {
      if (!manifest.provider) continue
      const { default: Provider } = await manifest.provider()
      this.providers.push(new Provider(this.app))
    }
    // Plugins bind their services during the application's boot: nothing resolves them before.
    for (const provider of this.providers) await provider.register?.()
    for (const provider of this.providers) await provider.boot?.()
    // Before the router commits (when the HTTP server boots): routes declared in the manifests.
    await registerPluginRoutes(this.registry, await this.app.container.make('router'), this.app)
  }

  async start() {
    for (const provider of this.providers) await provider.start?.()
  }

  async ready() {
    for (const provider of this.providers) await provider.ready?.()
  }

  async shutdown() {
    for (const provider of [...this.providers].reverse()) await provider.shutdown?.()
  }
}
