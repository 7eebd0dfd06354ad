import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { PluginRegistry, type PluginRoute } from '#core/plugins/plugin_registry'

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** `GET /auth/api/me`, `GET|POST /auth/authorize`, `ANY /auth/*` (HEAD goes without saying). */
function describeRoute({ methods, pattern }: PluginRoute) {
  const shown = ALL_METHODS.every((method) => methods.includes(method))
    ? ['ANY']
    : methods.filter((method) => method !== 'HEAD' || !methods.includes('GET'))
  return `${shown.join('|')} ${pattern}`
}

/** Prints every registered plugin (the kernel first) with what it claims. */
export default class PluginList extends BaseCommand {
  static commandName = 'plugin:list'
  static description =
    'List enabled plugins with their operations, socket types, system messages, jobs and HTTP routes'
  static options: CommandOptions = { startApp: true }

  async run() {
    const registry = await this.app.container.make(PluginRegistry)
    const claimsOf = <K>(map: Map<K, { pluginId: string }>, id: string) =>
      [...map.entries()].filter(([, claim]) => claim.pluginId === id).map(([key]) => String(key))

    for (const plugin of registry.plugins) {
      const dependsOn = plugin.dependsOn?.length
        ? ` (depends on ${plugin.dependsOn.join(', ')})`
        : ''
      this.logger.log(`${this.colors.bold(plugin.id)} ${plugin.version}${dependsOn}`)
      if (plugin.description) this.logger.log(`  ${this.colors.dim(plugin.description)}`)
      const sections: [string, string[]][] = [
        ['operations', claimsOf(registry.operations, plugin.id)],
        ['socket types', claimsOf(registry.socketTypes, plugin.id)],
        ['system messages', claimsOf(registry.systemMessages, plugin.id)],
        ['jobs', claimsOf(registry.jobs, plugin.id)],
        ['routes', registry.routesOf(plugin.id).map(describeRoute)],
      ]
      for (const [label, names] of sections) {
        this.logger.log(`  ${label}: ${names.length ? names.join(', ') : '-'}`)
      }
    }
  }
}
