import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { HealthService } from '#admin/services/health_service'

/** GET /admin/health: how this deployment is doing; each part reloads every few seconds. */
@inject()
export default class HealthController {
  constructor(private health: HealthService) {}

  async show({ inertia }: HttpContext) {
    return inertia.render('health', {
      about: () => this.health.about(),
      memory: () => this.health.memory(),
      instances: () => this.health.instancesSeen(),
      stores: () => this.health.stores(),
      jobs: () => this.health.jobs(),
      sections: () => this.health.pluginSections(),
      errors: () => this.health.errors(),
    })
  }

  /** POST /admin/health/jobs/:id/retry: a failed job back in line. */
  async retryJob({ params, session, response }: HttpContext) {
    const retried = await this.health.retryJob(String(params.id))
    session.flash('notice', retried ? 'The job is back in line' : 'This job is no longer failed')
    return response.redirect('/admin/health')
  }
}
