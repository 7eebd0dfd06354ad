import { inject } from '@adonisjs/core'
import type User from '#models/user'
import type { PageRequest } from '#core/paging'
import { ConsoleSecurity } from '#core/auth/console_security'
import type { UserPanel, UserPanelPart } from '#core/plugins/define_plugin'
import type { AuditActor } from '#core/audit/audit_log'

const SIGN_IN_SESSIONS = 'authSessions'
/** A browser's user agent is long: the start tells it apart (a phone keeps its table readable). */
const shortened = (text: string) => (text.length > 60 ? `${text.slice(0, 59)}…` : text)

/**
 * The authentication service's panel on the console's user page: the user's
 * signed-in apps and browsers (sign-in sessions), searchable, each with an End
 * button. Reads and ends them through the same service methods as the rest of
 * the console (this plugin's ConsoleSecurity).
 */
@inject()
export default class AuthServiceUserPanels implements UserPanelPart {
  constructor(private security: ConsoleSecurity) {}

  panels(): UserPanel[] {
    return [
      {
        key: SIGN_IN_SESSIONS,
        title: 'Sign-in sessions',
        description: 'Apps and browsers signed in through the authentication service.',
        columns: [
          { key: 'client', label: 'Client' },
          { key: 'address', label: 'Address' },
          { key: 'browser', label: 'Browser or app' },
          { key: 'created', label: 'Signed in', format: 'date' },
        ],
        searchPlaceholder: 'Client, address or browser',
        rowAction: {
          action: 'end',
          label: 'End',
          question: 'End this session? The app must sign in again.',
          notice: 'Session ended',
        },
      },
    ]
  }

  async rows(panelKey: string, user: User, request: PageRequest) {
    if (panelKey !== SIGN_IN_SESSIONS) throw new Error(`No panel ${panelKey}`)
    const sessions = await this.security.sessionsOf(user.id, request)
    return {
      ...sessions,
      items: sessions.items.map((session) => ({
        id: session.id,
        cells: {
          client: (session.client_id as string | null) ?? 'direct sign-in',
          address: (session.ip as string | null) ?? 'unknown',
          browser: shortened((session.user_agent as string | null) ?? 'unknown'),
          created: (session.created_at as string | null) ?? null,
        },
      })),
    }
  }

  async act(panelKey: string, action: string, user: User, rowId: string, by: AuditActor) {
    if (panelKey !== SIGN_IN_SESSIONS || action !== 'end') return false
    await this.security.endSession(user.id, rowId, 'console', by)
    return true
  }
}
