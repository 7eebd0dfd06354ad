import db from '@adonisjs/lucid/services/db'
import type { DashboardActivity, DashboardFigure, DashboardPart } from '#core/plugins/define_plugin'

/** The kernel's part of the dashboard: accounts and API sessions (tables the kernel owns). */
export class KernelDashboard implements DashboardPart {
  /** A session revoked or an account changed moves these figures. */
  static liveEvents = ['core:sessions_revoked']

  async figures(): Promise<DashboardFigure[]> {
    const [users, sessions] = await Promise.all([
      db.from('users').count('* as total').first(),
      db.from('api_sessions').whereNull('revoked_at').count('* as total').first(),
    ])
    return [
      { key: 'users', label: 'Users', value: Number(users?.total ?? 0), href: '/admin/users' },
      { key: 'sesskeys', label: 'API sessions', value: Number(sessions?.total ?? 0) },
    ]
  }

  /** The newest accounts. */
  async activity(limit: number): Promise<DashboardActivity[]> {
    const rows = await db
      .from('users')
      .orderBy('id', 'desc')
      .limit(limit)
      .select('id', 'code', 'created_at')
    return rows.map((row) => ({
      at: new Date(row.created_at).getTime(),
      actor: row.code,
      text: 'joined',
      href: `/admin/users/${Number(row.id)}`,
    }))
  }
}
