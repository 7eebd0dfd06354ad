import type { HttpContext, Router } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { sendError } from './http/responses.js'
import { authError } from './errors.js'

const AuthController = () => import('./http/auth_controller.js')
const SessionsController = () => import('./http/sessions_controller.js')

/** Loaded on the first protected request, then called directly. */
let bearer: typeof import('./http/bearer_middleware.js').default | null = null
const bearerMiddleware = async (ctx: HttpContext, next: NextFn) => {
  if (!bearer) {
    const loaded = await import('./http/bearer_middleware.js')
    bearer = loaded.default
  }
  return bearer(ctx, next)
}

/**
 * The auth service's routes under {auth_url}. Their middleware (body parsing,
 * bearer check) is route-group middleware: the server middleware, which
 * api.php also pays for, stays untouched.
 */
export function registerAuthRoutes(router: Router, prefix: string) {
  const middleware = router.named({
    authBody: () => import('./http/body_middleware.js'),
  })

  router
    .group(() => {
      router.post('/login', [AuthController, 'login']).as('login')
      router.post('/login/2fa', [AuthController, 'confirmTotp']).as('login.2fa')
      router
        .post('/login/2fa/setup/confirm', [AuthController, 'confirmSetup'])
        .as('login.2fa.setup.confirm')
      router.post('/token/refresh', [AuthController, 'refresh']).as('token.refresh')
      router.post('/logout', [AuthController, 'logout']).as('logout')
      router.post('/password/change', [AuthController, 'changePassword']).as('password.change')
      router.route('/authorize', ['GET', 'POST'], [AuthController, 'authorize']).as('authorize')
      router.get('/api/ping', [SessionsController, 'ping']).as('ping')

      router
        .group(() => {
          router
            .post('/api/sessions/revoke-others', [SessionsController, 'revokeOthers'])
            .as('sessions.revoke_others')
          router.get('/api/sessions', [SessionsController, 'index']).as('sessions.index')
          router.get('/api/me', [SessionsController, 'me']).as('me')
        })
        .use(bearerMiddleware)

      // JSON 404 under {auth_url}; never at the root, where it would shadow every later route.
      if (prefix !== '') {
        router
          .any('/*', (ctx) =>
            sendError(ctx, authError('not_found', 'No such endpoint of the authentication service'))
          )
          .as('not_found')
      }
    })
    .prefix(prefix)
    .as('auth_service')
    .use(middleware.authBody())
}
