import type { HttpContext } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { ConsoleFeedToken } from '#admin/feed_token'
import { allowChannel } from '#core/socket/transmit_channels'
import type { RowsChanged } from '../events.js'

/** The Transmit channel the console's table grids listen on. */
export const GRID_CHANNEL = 'admin/tables'

/** Encryption purpose of a grid's subscription token (not usable for another channel). */
const PURPOSE = 'console-table-grid'

/** Writes to one table within this delay are one notice: a bulk import is one reload. */
const NOTICE_DELAY_MS = 300

/** Row ids a notice names at most (the page only checks whether its rows are among them). */
const MAX_ROW_IDS = 500

/** What a grid receives: the table written and the rows written (created, changed, deleted). */
export interface GridNotice {
  catId: number
  rowIds: number[]
  /** More rows were written than rowIds lists. */
  more: boolean
}

/**
 * Live cells of the console's table grid: every row write (`tables:rows_changed`, whatever
 * wrote it: api.php, the socket, the console, a token, the recompute job) is announced on
 * `admin/tables`, at most once per NOTICE_DELAY_MS per table, and the open grid of that table
 * reloads its page. Each instance announces the writes it made; with Redis, Transmit carries
 * the notice to subscribers on every instance. Subscribers authenticate with a token from the
 * page's props (an SSE request carries no console session).
 */
export class GridFeed {
  private static started = false

  /** A token for the page of administrator `userId` (ConsoleFeedToken). */
  static tokenFor(userId: number) {
    return ConsoleFeedToken.for(userId, PURPOSE)
  }

  static authorize(ctx: HttpContext) {
    return ConsoleFeedToken.authorize(ctx, PURPOSE)
  }

  /** Registers the channel and forwards row writes (web and test processes, Transmit on). */
  static async start(app: ApplicationService) {
    if (GridFeed.started || !['web', 'test'].includes(app.getEnvironment())) return
    const { default: socketConfig } = await import('#config/socket')
    if (!socketConfig.transmit) return
    GridFeed.started = true
    const transmit = await app.container.make('transmit')
    allowChannel(transmit, GRID_CHANNEL, (ctx) => GridFeed.authorize(ctx))
    const { default: emitter } = await import('@adonisjs/core/services/emitter')
    const pending = new Map<number, { rowIds: Set<number>; more: boolean }>()
    const flush = (catId: number) => {
      const notice = pending.get(catId)
      pending.delete(catId)
      if (!notice) return
      const payload: GridNotice = { catId, rowIds: [...notice.rowIds], more: notice.more }
      transmit.broadcast(GRID_CHANNEL, payload as any)
    }
    emitter.on('tables:rows_changed', (event: RowsChanged) => {
      let notice = pending.get(event.categoryId)
      if (!notice) {
        notice = { rowIds: new Set(), more: false }
        pending.set(event.categoryId, notice)
        setTimeout(() => flush(event.categoryId), NOTICE_DELAY_MS).unref()
      }
      for (const id of [...event.created, ...event.modified, ...event.deleted]) {
        if (notice.rowIds.size >= MAX_ROW_IDS) {
          notice.more = true
          break
        }
        notice.rowIds.add(id)
      }
    })
  }
}
