import type { HttpContext } from '@adonisjs/core/http'
import limiter from '@adonisjs/limiter/services/main'
import access from '#core/services/access'
import auth from '../services/auth.js'
import { respond, send } from './responses.js'

/** Endpoints behind the bearer middleware (ctx.authIdentity is set). */
export default class SessionsController {
  /**
   * `POST {auth_url}/api/sessions/revoke-others` (4.B.1): every other auth
   * session of the user, and all its request-API sesskeys and oauthkeys, are
   * revoked. Rate limited per user.
   */
  revokeOthers(ctx: HttpContext) {
    return respond(ctx, async () => {
      const identity = ctx.authIdentity!
      const { maxRequests, window } = auth.config.revokeOthers
      await limiter
        .use({ requests: maxRequests, duration: window })
        .consume(`auth:revoke-others:${identity.userUuid}`)

      const authSessions = await auth.sessions.revokeOthers(identity.userId, identity.sessionId)
      const api = await access.revokeAllSessionsOf(identity.userId, 'revoke-others')
      const revoked = authSessions + api.sessions
      return {
        success: true,
        message: revoked === 1 ? '1 other session revoked' : `${revoked} other sessions revoked`,
        revoked,
        details: {
          auth_sessions: authSessions,
          api_sessions: api.sessions,
          oauthkeys: api.oauthkeys,
        },
      }
    })
  }

  /** `GET {auth_url}/api/sessions`: the user's active auth sessions. */
  index(ctx: HttpContext) {
    return respond(ctx, async () => {
      const identity = ctx.authIdentity!
      return {
        success: true,
        current: identity.sessionId,
        sessions: await auth.sessions.listActive(identity.userId),
      }
    })
  }

  /** `GET {auth_url}/api/me`: who the token speaks for (answered from the verified token). */
  me(ctx: HttpContext) {
    const identity = ctx.authIdentity!
    send(ctx, 200, {
      success: true,
      user: { id: identity.userUuid, email: identity.email ?? '', code: identity.userCode },
      session: {
        id: identity.sessionId,
        expires_at: new Date(identity.claims.exp * 1000).toISOString(),
      },
    })
  }

  /** `GET {auth_url}/api/ping`: unprotected liveness probe (the benchmark's baseline). */
  ping(ctx: HttpContext) {
    send(ctx, 200, { success: true })
  }
}
