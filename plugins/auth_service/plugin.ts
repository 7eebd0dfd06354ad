import { definePlugin } from '#core/plugins/define_plugin'

/**
 * The authentication service (spec parts B): password and TOTP login, JWT
 * access tokens with rotating refresh tokens, OIDC-style bootstrap,
 * revoke-others. HTTP routes under {auth_url} (listed by `plugin:list`); no
 * api.php operations.
 */
export default definePlugin({
  id: 'auth_service',
  version: '0.1.0',
  description:
    'Authentication service: password + TOTP login, JWT and refresh tokens, revoke-others',
  provider: () => import('./provider.js'),
  routes: () => import('./routes.js'),
  // No console pages of its own: its part of the dashboard.
  admin: {
    dashboard: () => import('./admin/dashboard.js'),
  },
})
