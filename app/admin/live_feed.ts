import type { HttpContext } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import encryption from '@adonisjs/core/services/encryption'
import User from '#models/user'
import { allowChannel } from '#core/socket/transmit_channels'

/** The Transmit channel the dashboard listens on. */
export const DASHBOARD_CHANNEL = 'admin/dashboard'

/** Encryption purpose of the dashboard's subscription token (it cannot be replayed elsewhere). */
const PURPOSE = 'console-dashboard'

/** The changes that move the dashboard's figures. */
const EVENTS = [
  'books:message_created',
  'books:message_updated',
  'books:message_deleted',
  'books:book_updated',
  'books:member_changed',
  'tables:rows_changed',
  'core:sessions_revoked',
] as const

/** At most one notice per interval: a burst of writes is one reload of the figures. */
const NOTICE_INTERVAL_MS = 1000

/**
 * Live updates of the console's dashboard through Transmit (SSE): the page
 * subscribes to `admin/dashboard` with a token it got in its props (SSE
 * requests carry no console session), and is told — at most once a second —
 * that figures changed; it then reloads them (an Inertia partial reload).
 */
export class DashboardFeed {
  /** A token for the page of administrator `userId`, valid two hours. */
  static tokenFor(userId: number) {
    return encryption.encrypt({ userId }, '2 hours', PURPOSE)
  }

  /** Whether the subscriber's token names an administrator who may still use the console. */
  static async authorize(ctx: HttpContext) {
    const token = ctx.request.header('x-console-token') ?? ''
    const claim = token ? encryption.decrypt<{ userId: number }>(token, PURPOSE) : null
    if (!claim?.userId) return false
    const user = await User.find(claim.userId)
    return Boolean(user?.isAdmin && !user.disabledAt)
  }

  /** Registers the channel and forwards the changes (web and test processes). */
  static async start(app: ApplicationService) {
    const transmit = await app.container.make('transmit')
    allowChannel(transmit, DASHBOARD_CHANNEL, (ctx) => DashboardFeed.authorize(ctx))
    const { default: emitter } = await import('@adonisjs/core/services/emitter')
    let pending: NodeJS.Timeout | null = null
    const notice = () => {
      if (pending) return
      pending = setTimeout(() => {
        pending = null
        transmit.broadcast(DASHBOARD_CHANNEL, { changed: Date.now() })
      }, NOTICE_INTERVAL_MS)
      pending.unref()
    }
    for (const event of EVENTS) emitter.on(event as any, notice)
  }
}
