import type { Router } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import type { PluginAdminRoutes } from '#core/plugins/define_plugin'
import { serveConsoleAsset } from './assets.js'
import { renderConsoleNotFound } from './console_errors.js'

const SignInController = () => import('./controllers/sign_in_controller.js')
const DashboardController = () => import('./controllers/dashboard_controller.js')
const UsersController = () => import('./controllers/users_controller.js')
const PluginsController = () => import('./controllers/plugins_controller.js')
const HealthController = () => import('./controllers/health_controller.js')
const AccountController = () => import('./controllers/account_controller.js')
const AuditController = () => import('./controllers/audit_controller.js')
const SettingsController = () => import('./controllers/settings_controller.js')

/**
 * The admin console under /admin. Its stack (session, shield with CSRF,
 * auth, inertia) is route-group middleware: api.php, the wire URLs and the
 * socket never pay for it (bench:api keeps the figure). Plugins add pages
 * through their manifest's `admin.routes`, mounted at /admin/<id> inside
 * the signed-in group.
 */
export async function registerConsole(router: Router, app: ApplicationService) {
  const middleware = router.named({
    noStore: () => import('./middleware/no_store_middleware.js'),
    bodyparser: () => import('@adonisjs/core/bodyparser_middleware'),
    session: () => import('@adonisjs/session/session_middleware'),
    shield: () => import('@adonisjs/shield/shield_middleware'),
    auth: () => import('@adonisjs/auth/initialize_auth_middleware'),
    inertia: () => import('@adonisjs/inertia/inertia_middleware'),
    console: () => import('./middleware/console_auth_middleware.js'),
  })

  router.get('/', ({ response }) => response.redirect('/admin'))
  router.get('/admin/assets/*', serveConsoleAsset)

  // Loaded first: a group's callback must declare its routes synchronously.
  const registry = await app.container.make(PluginRegistry)
  const contributed: { id: string; permission?: string; routes: PluginAdminRoutes }[] = []
  for (const plugin of registry.plugins) {
    if (plugin.admin?.routes) {
      const { default: routes } = await plugin.admin.routes()
      contributed.push({ id: plugin.id, permission: plugin.admin.permission, routes })
    }
  }
  router
    .group(() => {
      router.get('/admin/login', [SignInController, 'show']).as('console.login')
      router.post('/admin/login', [SignInController, 'password'])
      router.post('/admin/login/code', [SignInController, 'code'])
      router.post('/admin/logout', [SignInController, 'signOut']).as('console.logout')

      router
        .group(() => {
          router.get('/admin', [DashboardController, 'show']).as('console.dashboard')
          router.get('/admin/users', [UsersController, 'index']).as('console.users')
          router.post('/admin/users', [UsersController, 'store'])
          router.get('/admin/users/:id', [UsersController, 'show']).as('console.user')
          router.post('/admin/users/:id', [UsersController, 'update'])
          router.post('/admin/users/:id/password', [UsersController, 'password'])
          router.post('/admin/users/:id/disable', [UsersController, 'disable'])
          router.post('/admin/users/:id/two-factor', [UsersController, 'twoFactor'])
          router.post('/admin/users/:id/delegations', [UsersController, 'delegate'])
          router.post('/admin/users/:id/sessions/revoke', [UsersController, 'revokeSession'])
          router.post('/admin/users/:id/panels/:panel/:action', [UsersController, 'panelAction'])
          router.get('/admin/settings', [SettingsController, 'index']).as('console.settings')
          router.post('/admin/settings/:key', [SettingsController, 'update'])
          router.get('/admin/plugins', [PluginsController, 'index']).as('console.plugins')
          router.get('/admin/health', [HealthController, 'show']).as('console.health')
          router.post('/admin/health/jobs/:id/retry', [HealthController, 'retryJob'])
        })
        // The right the navigation asks for these pages guards their routes too (an address
        // typed by hand is the "Not allowed" page, as a link that is not offered would be).
        .use(middleware.console({ permission: 'admin' }))

      // Their own account: any administrator.
      router
        .group(() => {
          router.get('/admin/account', [AccountController, 'show']).as('console.account')
          router.post('/admin/account/totp', [AccountController, 'startTotp'])
          router.post('/admin/account/totp/confirm', [AccountController, 'confirmTotp'])
          router.post('/admin/account/recovery-codes', [AccountController, 'regenerateCodes'])
          router.post('/admin/account/api-password', [AccountController, 'apiPassword'])
          router.post('/admin/account/oauthkeys', [AccountController, 'createOauthkey'])
          router.post('/admin/account/oauthkeys/:id/revoke', [AccountController, 'revokeOauthkey'])
        })
        .use(middleware.console())

      // The audit log: only administrators holding the right the Users pages need.
      router
        .group(() => {
          router.get('/admin/audit', [AuditController, 'index']).as('console.audit')
          router.get('/admin/audit.csv', [AuditController, 'csv']).as('console.audit_csv')
        })
        .use(middleware.console({ permission: 'admin' }))

      for (const plugin of contributed) {
        router
          .group(() => plugin.routes(router, { app, pluginId: plugin.id }))
          .prefix(`/admin/${plugin.id}`)
          .as(`console.${plugin.id}`)
          .use(middleware.console({ permission: plugin.permission }))
      }

      // Last: any other /admin address is the console's 404 page, with its navigation.
      router
        .any('/admin/*', async (ctx) => {
          await renderConsoleNotFound(ctx)
        })
        .use(middleware.console({ signedOut: 'not-found' }))
    })
    .use([
      middleware.noStore(),
      middleware.bodyparser(),
      middleware.session(),
      middleware.shield(),
      middleware.auth(),
      middleware.inertia(),
    ])
}
