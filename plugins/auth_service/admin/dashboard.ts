import db from '@adonisjs/lucid/services/db'
import type { DashboardFigure, DashboardPart } from '#core/plugins/define_plugin'

/** The authentication service's part of the console's dashboard: its open sessions. */
export default class AuthServiceDashboard implements DashboardPart {
  async figures(): Promise<DashboardFigure[]> {
    const open = await db.from('auth_sessions').whereNull('revoked_at').count('* as total').first()
    return [{ key: 'authSessions', label: 'Signed-in apps', value: Number(open?.total ?? 0) }]
  }
}
