import { definePlugin } from '#core/plugins/define_plugin'

/**
 * The kernel's own operations (keys, sessions, users), registered like a
 * plugin's so that names stay unique across the whole server.
 */
export default definePlugin({
  id: 'core',
  version: '1.0.0',
  description: 'Keys, sessions and users',
  operations: {
    createAppkey: () => import('./create_appkey.js'),
    createOauthkey: () => import('./create_oauthkey.js'),
    createSesskey: () => import('./create_sesskey.js'),
    dropAllSessions: () => import('./drop_all_sessions.js'),
    getOrCreateSessKey: () => import('./get_or_create_sess_key.js'),
    getUserInfo: () => import('./get_user_info.js'),
  },
  // Descriptions and examples for the API reference and MCP tools (docs/api-reference.md).
  reference: () => import('./reference.js'),
  jobs: {
    'core.probe': () => import('#core/jobs/probe_job'),
    // One attempt of one outbox delivery (docs/outbox.md).
    'core.outbox': () => import('#core/outbox/outbox_job'),
  },
})
