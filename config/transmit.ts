import env from '#start/env'
import { defineConfig } from '@adonisjs/transmit'
import { redis } from '@adonisjs/transmit/transports'

/**
 * Transmit (SSE): the socket's server -> client messages, published per user
 * on `users/<u_c>` (docs/socket.md). With Redis configured, broadcasts and
 * subscriptions travel between instances through Transmit's Redis transport;
 * the channel carries REDIS_PREFIX so that separate deployments sharing one
 * Redis server stay apart.
 */
const redisHost = env.get('REDIS_HOST')

const transmitConfig = defineConfig({
  pingInterval: '30s',
  transport: redisHost
    ? {
        driver: redis({
          host: redisHost,
          port: env.get('REDIS_PORT', 6379),
          password: env.get('REDIS_PASSWORD', '') || undefined,
          db: env.get('REDIS_DB', 0),
          lazyConnect: true,
        }),
        channel: `${env.get('REDIS_PREFIX', 'quire:')}transmit::broadcast`,
      }
    : null,
})

export default transmitConfig
