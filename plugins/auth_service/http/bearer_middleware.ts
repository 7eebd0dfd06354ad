import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { SessionService, type BearerIdentity } from '../services/session_service.js'
import { sendError } from './responses.js'

declare module '@adonisjs/core/http' {
  interface HttpContext {
    /** Set on the auth service's protected routes: who the bearer token speaks for. */
    authIdentity?: BearerIdentity
  }
}

/**
 * Protected auth routes: a valid access token of a still active session, or
 * 'unauthorized'. A plain function rather than a middleware class: it runs on
 * every protected request, and a class would be built by the container each
 * time. The session service is resolved on the first request, then kept.
 */
export function bearerMiddleware(app: ApplicationService) {
  let sessions: SessionService | null = null
  return async function bearer(ctx: HttpContext, next: NextFn) {
    try {
      sessions ??= await app.container.make(SessionService)
      ctx.authIdentity = await sessions.authenticate(ctx.request.header('authorization'))
    } catch (error) {
      return sendError(ctx, error)
    }
    return next()
  }
}
