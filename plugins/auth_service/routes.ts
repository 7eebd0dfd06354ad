import type { PluginRoutes } from '#core/plugins/define_plugin'
import authConfig from './config.js'
import { sendError } from './http/responses.js'
import { bearerMiddleware } from './http/bearer_middleware.js'
import { authError } from './errors.js'

const AuthController = () => import('./http/auth_controller.js')
const SessionsController = () => import('./http/sessions_controller.js')

/**
 * The auth service's routes under {auth_url} (AUTH_URL_PREFIX), declared in
 * the manifest (plugin.ts `routes`) and registered by the plugin loader before
 * the router commits; `node ace plugin:list` lists them. Their middleware
 * (body parsing, bearer check) is route-group middleware: the server
 * middleware, which api.php also pays for, stays untouched.
 */
const registerAuthRoutes: PluginRoutes = (router, { app }) => {
  const prefix = authConfig.prefix
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
        .use(bearerMiddleware(app))

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

export default registerAuthRoutes
