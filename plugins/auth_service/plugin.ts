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
  // Descriptions and examples for the API reference and MCP tools (docs/api-reference.md).
  reference: () => import('./reference.js'),
  provider: () => import('./provider.js'),
  routes: () => import('./routes.js'),
  // No console pages of its own: its part of the dashboard, and its panel on the user page.
  admin: {
    dashboard: () => import('./admin/dashboard.js'),
    userPanels: () => import('./admin/user_panels.js'),
  },
  // Read on every call through the settings service (docs/settings.md): a change applies at once.
  settings: [
    {
      key: 'revokeMaxRequests',
      label: 'Sign out everywhere else: requests allowed',
      help: 'How many times one user may ask to sign out all their other sessions within the window (AUTH_REVOKE_WINDOW).',
      type: 'integer',
      default: 5,
      min: 1,
      max: 1000,
      env: 'AUTH_REVOKE_MAX_REQUESTS',
      runtime: true,
    },
  ],
})
