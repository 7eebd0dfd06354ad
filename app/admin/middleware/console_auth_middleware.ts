import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import app from '@adonisjs/core/services/app'
import { errors } from '@adonisjs/core'
import { ConsoleSecurity } from '#core/auth/console_security'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { navigationFor, mayUse } from '#admin/navigation'
import { SESSION_KEYS } from '#admin/sign_in'
import { markSignedInConsolePage } from '#admin/console_errors'

/**
 * Every console page but the sign-in: a signed-in administrator whose
 * console session (a session of the authentication provider, revocable from
 * the Users page)
 * is still active. Anyone else is sent to the sign-in page before any
 * handler runs: no page, no prop. Shares `me` and `nav` with every page
 * (the forbidden and not-found pages too: they keep the navigation).
 * `permission` (a right name) narrows a plugin's pages further; `signedOut:
 * 'not-found'` answers the plain 404 instead of the sign-in (the catch-all).
 */
export default class ConsoleAuthMiddleware {
  async handle(
    ctx: HttpContext,
    next: NextFn,
    options: { permission?: string; signedOut?: 'sign-in' | 'not-found' } = {}
  ) {
    const guard = ctx.auth.use('web')
    const user = (await guard.check()) ? guard.user! : null
    const security = await app.container.make(ConsoleSecurity)
    const sid = ctx.session.get(SESSION_KEYS.authSession) as string | undefined
    const active =
      user !== null &&
      user.isAdmin &&
      sid !== undefined &&
      (await security.isSessionOpen(user.id, sid))
    if (!active) {
      if (user) await guard.logout()
      ctx.session.forget(SESSION_KEYS.authSession)
      // An address that is no page (the last catch-all) is a plain 404 for anyone signed out.
      if (options.signedOut === 'not-found')
        throw new errors.E_ROUTE_NOT_FOUND([ctx.request.method(), ctx.request.url()])
      return ctx.response.redirect('/admin/login', false, 303)
    }
    const registry = await app.container.make(PluginRegistry)
    ctx.inertia.share({
      me: { code: user.code, name: `${user.firstName} ${user.lastName}`.trim() || user.code },
      nav: navigationFor(registry, user),
      notice: ctx.session.flashMessages.get('notice') ?? null,
    })
    markSignedInConsolePage(ctx)
    if (!mayUse(user, options.permission)) {
      // Sent here: a middleware's return value is not the answer (only a route handler's is).
      ctx.response.status(403)
      return ctx.response.send(await ctx.inertia.render('forbidden', {}))
    }
    return next()
  }
}
