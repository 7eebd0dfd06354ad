import app from '@adonisjs/core/services/app'
import type { PluginRegistry } from '#core/plugins/plugin_registry'

/** The booted PluginRegistry singleton. */
let plugins: PluginRegistry

await app.booted(async () => {
  plugins = await app.container.make('quire.plugins')
})

export { plugins as default }
