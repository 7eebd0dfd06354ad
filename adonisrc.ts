import { defineConfig } from '@adonisjs/core/app'

export default defineConfig({
  /*
  | Providers shut down in reverse order (and terminating hooks run last-added first), so the
  | database and Redis close after every provider that uses them: the socket hub, the plugins'
  | background work and the stamp allocator stop while their connections are still open.
  */
  experimental: {
    shutdownInReverseOrder: true,
  },

  /*
  | Commands: the framework's, Lucid's, the app's own (commands/) and every
  | enabled plugin's (plugins/<id>/commands), through one loader.
  */
  commands: [
    () => import('@adonisjs/core/commands'),
    () => import('@adonisjs/lucid/commands'),
    () => import('#core/plugins/plugin_commands_loader'),
  ],

  providers: [
    () => import('@adonisjs/core/providers/app_provider'),
    () => import('@adonisjs/core/providers/hash_provider'),
    {
      file: () => import('@adonisjs/core/providers/repl_provider'),
      environment: ['repl', 'test'],
    },
    () => import('@adonisjs/core/providers/vinejs_provider'),
    () => import('@adonisjs/lucid/database_provider'),
    () => import('@adonisjs/redis/redis_provider'),
    () => import('@adonisjs/limiter/limiter_provider'),
    () => import('@adonisjs/drive/drive_provider'),
    () => import('#providers/quire_provider'),
    () => import('#providers/plugins_provider'),
    // After the plugins (it reads their manifests' settings), before anything that reads a setting.
    () => import('#core/settings/settings_provider'),
    () => import('#providers/queue_provider'),
    () => import('@adonisjs/transmit/transmit_provider'),
    () => import('#providers/socket_provider'),
    // The admin console (/admin): its middleware runs on its route group only (app/admin/routes.ts).
    () => import('@adonisjs/core/providers/edge_provider'),
    () => import('@adonisjs/session/session_provider'),
    () => import('@adonisjs/shield/shield_provider'),
    () => import('@adonisjs/auth/auth_provider'),
    () => import('#admin/console_provider'),
    () => import('@adonisjs/inertia/inertia_provider'),
  ],

  preloads: [() => import('#start/routes'), () => import('#start/kernel')],

  tests: {
    suites: [
      {
        files: ['tests/unit/**/*.spec(.ts|.js)', 'plugins/*/tests/unit/**/*.spec(.ts|.js)'],
        name: 'unit',
        timeout: 10_000,
      },
      {
        files: [
          'tests/functional/**/*.spec(.ts|.js)',
          'plugins/*/tests/functional/**/*.spec(.ts|.js)',
        ],
        name: 'functional',
        timeout: 60_000,
      },
      {
        files: ['tests/browser/**/*.spec(.ts|.js)'],
        name: 'browser',
        timeout: 300_000,
      },
      {
        files: ['tests/fuzz/**/*.spec(.ts|.js)'],
        name: 'fuzz',
        timeout: 300_000,
      },
      {
        files: ['tests/authz/**/*.spec(.ts|.js)'],
        name: 'authz',
        timeout: 300_000,
      },
    ],
    forceExit: false,
  },

  // Copied by `node ace build`: the console's root view and its vite build (npm run build:console).
  metaFiles: [
    { pattern: 'resources/views/**/*.edge', reloadServer: false },
    { pattern: 'public/**', reloadServer: false },
  ],

  assetsBundler: false,
  hooks: {},
})
