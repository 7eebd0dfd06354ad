import app from '@adonisjs/core/services/app'
import { defineConfig, stores } from '@adonisjs/session'

/**
 * Sessions of the admin console only (its route group's middleware; api.php
 * and the wire URLs never open one). The session lives in an encrypted
 * cookie: nothing to store server-side, and any instance can read it.
 * Secure cookies in production: serve the console over HTTPS there.
 */
const sessionConfig = defineConfig({
  enabled: true,
  cookieName: 'quire-console',
  clearWithBrowser: true,
  age: '8h',
  cookie: {
    path: '/admin',
    httpOnly: true,
    secure: app.inProduction,
    sameSite: 'lax',
  },
  store: 'cookie',
  stores: {
    cookie: stores.cookie(),
  },
})

export default sessionConfig
