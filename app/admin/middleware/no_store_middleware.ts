import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'

/**
 * Every console answer (pages, redirects, form posts, the sign-in) is sent
 * with `Cache-Control: no-store`: after sign-out, the browser's back button
 * must not show a page (figures, message texts) from its cache. Inertia's own
 * copy of each page, in the browser history, is encrypted (config/inertia.ts
 * `history.encrypt`) and its key dropped at sign-out (the sign-in page clears
 * the history). The built assets under /admin/assets are outside this group
 * and stay cacheable.
 */
export default class NoStoreMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    ctx.response.header('Cache-Control', 'no-store')
    return next()
  }
}
