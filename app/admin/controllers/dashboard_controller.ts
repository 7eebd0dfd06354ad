import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { DashboardService } from '#admin/services/dashboard_service'
import { DASHBOARD_CHANNEL, DashboardFeed } from '#admin/live_feed'

/** GET /admin: the dashboard. Its figures reload in place (partial reloads) when Transmit says they changed. */
@inject()
export default class DashboardController {
  constructor(private dashboard: DashboardService) {}

  async show({ inertia, auth }: HttpContext) {
    return inertia.render('dashboard', {
      // Transmit (SSE) tells the page when figures changed; it then reloads them.
      live: () => ({
        channel: DASHBOARD_CHANNEL,
        token: DashboardFeed.tokenFor(auth.use('web').user!.id),
      }),
      counts: () => this.dashboard.counts(),
      queue: () => this.dashboard.queueHealth(),
      charts: () => this.dashboard.charts(),
      activity: () => this.dashboard.recentActivity(),
    })
  }
}
