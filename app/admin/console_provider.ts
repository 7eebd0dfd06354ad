import type { ApplicationService } from '@adonisjs/core/types'
import { existsSync } from 'node:fs'
import { Vite } from '@adonisjs/vite'
import { QueueService } from '#core/services/queue_service'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { DashboardService } from '#admin/services/dashboard_service'
import { KernelDashboard } from '#admin/services/kernel_dashboard'
import { HealthService } from '#admin/services/health_service'
import { InstanceRegistry } from '#core/health/instances'

/**
 * The admin console's provider. Binds `vite` (what Inertia and the edge
 * layout read the built assets' manifest from) WITHOUT @adonisjs/vite's
 * provider: that one starts a Vite dev server inside every development and
 * test process. Quire always serves the build (public/assets, made by
 * `npm run build:console`, which `npm install` and `quire:setup` run);
 * `npm run dev:console` rebuilds it on change.
 */
export default class ConsoleProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    const vite = new Vite(false, this.app.config.get('vite'))
    this.app.container.bind('vite' as any, () => vite)
    // One instance: it builds the plugins' dashboard parts once.
    this.app.container.singleton(DashboardService, async (resolver) => {
      return new DashboardService(
        await resolver.make(QueueService),
        await resolver.make(PluginRegistry),
        new KernelDashboard()
      )
    })
    this.app.container.singleton(HealthService, async (resolver) => {
      return new HealthService(
        await resolver.make(QueueService),
        await resolver.make(PluginRegistry),
        await resolver.make(InstanceRegistry)
      )
    })
  }

  /** The dashboard's live feed (Transmit), where requests are served. */
  async start() {
    const environment = this.app.getEnvironment()
    if (environment !== 'web' && environment !== 'test') return
    const { default: socketConfig } = await import('#config/socket')
    if (!socketConfig.transmit) return
    const { DashboardFeed } = await import('#admin/live_feed')
    await DashboardFeed.start(this.app)
  }

  async boot() {
    const { default: edge } = await import('edge.js')
    const { edgePluginVite } = await import('@adonisjs/vite/plugins/edge')
    edge.use(edgePluginVite(await this.app.container.make('vite' as any)))
    // Without a build the root view says how to make one, rather than failing with a 500.
    const manifest = this.app.makePath('public/assets/.vite/manifest.json')
    edge.global('consoleBuilt', () => existsSync(manifest))
  }
}
