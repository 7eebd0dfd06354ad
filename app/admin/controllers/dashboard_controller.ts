import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { DashboardService } from '#admin/services/dashboard_service'
import { DASHBOARD_CHANNEL, DashboardFeed } from '#admin/live_feed'
import { ConsoleSecurity } from '#core/auth/console_security'

/** GET /admin: the dashboard. Its figures reload in place (partial reloads) when Transmit says they changed. */
@inject()
export default class DashboardController {
  constructor(
    private dashboard: DashboardService,
    private security: ConsoleSecurity
  ) {}

  async show({ inertia, auth }: HttpContext) {
    const me = auth.use('web').user!
    return inertia.render('dashboard', {
      // Shown as a warning while the administrator has no second factor (development, or
      // production with ADMIN_TOTP_REQUIRED=false: otherwise the sign-in enrols first).
      security: async () => {
        const state = await this.security.twoFactorOf(me)
        return { totpEnrolled: state.enrolled }
      },
      // Transmit (SSE) tells the page when figures changed; it then reloads them.
      live: () => ({
        channel: DASHBOARD_CHANNEL,
        token: DashboardFeed.tokenFor(auth.use('web').user!.id),
      }),
      figures: () => this.dashboard.figures(me),
      queue: () => this.dashboard.queueHealth(),
      charts: () => this.dashboard.charts(me),
      activity: () => this.dashboard.activity(me),
    })
  }
}
