import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import { SessionService } from '../services/session_service.js'
import { respond, send } from './responses.js'

/** Endpoints behind the bearer middleware (ctx.authIdentity is set). */
@inject()
export default class SessionsController {
  constructor(private sessions: SessionService) {}

  /**
   * `POST {auth_url}/api/sessions/revoke-others` (4.B.1): every other auth
   * session of the user, and all its request-API sesskeys and oauthkeys, are
   * revoked (SessionService.revokeOthers, rate limited per user).
   */
  revokeOthers(ctx: HttpContext) {
    return respond(ctx, async () => {
      const revoked = await this.sessions.revokeOthers(ctx.authIdentity!)
      const total = revoked.authSessions + revoked.apiSessions
      return {
        success: true,
        message: total === 1 ? '1 other session revoked' : `${total} other sessions revoked`,
        revoked: total,
        details: {
          auth_sessions: revoked.authSessions,
          api_sessions: revoked.apiSessions,
          oauthkeys: revoked.oauthkeys,
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
        sessions: await this.sessions.listActive(identity.userId),
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
