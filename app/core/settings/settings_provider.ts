import type { ApplicationService } from '@adonisjs/core/types'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import quireConfig from '#config/quire'
import env from '#start/env'
import { SettingsRegistry } from './settings_registry.js'
import { SettingsService } from './settings_service.js'
import { LocalSettingsBus, RedisSettingsBus, type SettingsBus } from './settings_bus.js'
import { kernelSettings } from './kernel_settings.js'
import { setSettingsService } from './main.js'
import { AuditLog } from '#core/audit/audit_log'

/**
 * Collects the kernel's and every enabled plugin's settings (after
 * PluginsProvider has loaded the manifests), reads the stored overrides while
 * booting (so plugins' start and ready phases see them), and listens for the
 * other instances' changes once started (Redis when configured).
 */
export default class SettingsProvider {
  private service: SettingsService | null = null

  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton(SettingsService, async () => {
      if (!this.service) throw new Error('Settings are not loaded yet: resolve them after boot')
      return this.service
    })
  }

  async boot() {
    const plugins = await this.app.container.make(PluginRegistry)
    const registry = new SettingsRegistry().declare('core', kernelSettings)
    for (const plugin of plugins.plugins) registry.declare(plugin.id, plugin.settings ?? [])
    const logger = await this.app.container.make('logger')
    let bus: SettingsBus = new LocalSettingsBus()
    if (quireConfig.redisEnabled) {
      // The container's manager: services/main is only set once every provider has booted.
      const redis = await this.app.container.make('redis')
      bus = new RedisSettingsBus(redis.connection(), logger, env.get('REDIS_PREFIX', 'quire:'))
    }
    this.service = new SettingsService(
      registry,
      bus,
      logger,
      (name) => env.get(name as any),
      await this.app.container.make(AuditLog)
    )
    setSettingsService(this.service)
    await this.service.load()
  }

  async start() {
    // Servers, queue workers (ace commands) and tests follow the other instances' changes.
    if (this.app.getEnvironment() === 'repl') return
    await this.service?.start()
  }

  async shutdown() {
    await this.service?.stop()
  }
}
