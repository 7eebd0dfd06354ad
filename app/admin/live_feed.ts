import type { HttpContext } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { ConsoleFeedToken } from '#admin/feed_token'
import { allowChannel } from '#core/socket/transmit_channels'
import { DashboardService } from '#admin/services/dashboard_service'

/** The Transmit channel the dashboard listens on. */
export const DASHBOARD_CHANNEL = 'admin/dashboard'

/** Encryption purpose of the dashboard's subscription token (it cannot be replayed elsewhere). */
const PURPOSE = 'console-dashboard'

/** At most one notice per interval: a burst of writes is one reload of the figures. */
const NOTICE_INTERVAL_MS = 1000

/**
 * Live updates of the console's dashboard through Transmit (SSE): the page
 * subscribes to `admin/dashboard` with a token it got in its props (SSE
 * requests carry no console session), and is told — at most once a second —
 * that figures changed; it then reloads them (an Inertia partial reload).
 */
export class DashboardFeed {
  /** A token for the page of administrator `userId` (ConsoleFeedToken). */
  static tokenFor(userId: number) {
    return ConsoleFeedToken.for(userId, PURPOSE)
  }

  static authorize(ctx: HttpContext) {
    return ConsoleFeedToken.authorize(ctx, PURPOSE)
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
    // The kernel's and every plugin's (manifest admin.liveEvents): the console names none itself.
    const dashboard = await app.container.make(DashboardService)
    for (const event of dashboard.liveEvents()) emitter.on(event as any, notice)
  }
}
