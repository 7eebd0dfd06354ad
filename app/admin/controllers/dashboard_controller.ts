import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { DashboardService } from '#admin/services/dashboard_service'

/** GET /admin: the dashboard. Its figures reload in place (partial reloads) while it is open. */
@inject()
export default class DashboardController {
  constructor(private dashboard: DashboardService) {}

  async show({ inertia }: HttpContext) {
    return inertia.render('dashboard', {
      counts: () => this.dashboard.counts(),
      queue: () => this.dashboard.queueHealth(),
      charts: () => this.dashboard.charts(),
      activity: () => this.dashboard.recentActivity(),
    })
  }
}
