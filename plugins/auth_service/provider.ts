import type { Server as NodeServer } from 'node:http'
import app from '@adonisjs/core/services/app'
import type { AuthServices } from './services/auth_services.js'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'auth_service.services': AuthServices
  }
}

/** Environments that serve HTTP: only they subscribe to revocations and listen on AUTH_PORT. */
const serving = () => ['web', 'test'].includes(app.getEnvironment())

let ownPortServer: NodeServer | null = null
let purgeTimer: NodeJS.Timeout | null = null
let started: AuthServices | null = null

/**
 * The auth service's provider: binds its services, mounts its routes under
 * {auth_url}, and when serving, starts the revocation bus at boot (before the
 * first bearer check can fill a cache) and the optional second port.
 */
export default {
  async boot() {
    const { default: authConfig } = await import('./config.js')
    app.container.singleton('auth_service.services', async () => {
      const { createAuthServices } = await import('./services/auth_services.js')
      return createAuthServices(app)
    })

    const { registerAuthRoutes } = await import('./routes.js')
    registerAuthRoutes(await app.container.make('router'), authConfig.prefix)

    // dropAllSessions (api.php) keeps one sesskey and ends every other session: auth sessions too,
    // so that both worlds agree. (revoke-others, which keeps an auth session, reports no kept sesskey.)
    const emitter = await app.container.make('emitter')
    emitter.on('core:sessions_revoked', async ({ userId, keptSessionId, reason }) => {
      if (keptSessionId === null) return
      const services = await app.container.make('auth_service.services')
      await services.sessions.revokeAll(userId, reason.slice(0, 64))
    })

    if (!serving()) return
    app.booted(async () => {
      const services = (started = await app.container.make('auth_service.services'))
      purgeTimer = setInterval(
        () => void services.login.purgeExpired().catch(() => {}),
        3600_000
      ).unref()
    })
    if (authConfig.port && app.getEnvironment() === 'web') {
      app.ready(async () => {
        ownPortServer = await listenOnOwnPort(authConfig.port!, authConfig.prefix)
      })
    }
  },

  async shutdown() {
    if (purgeTimer) clearInterval(purgeTimer)
    if (ownPortServer) await new Promise((resolve) => ownPortServer!.close(resolve))
    await started?.bus.stop()
  },
}

/**
 * AUTH_PORT: the same application also answers on a second port, where only
 * {auth_url} routes are served (anything else is a JSON 404), so the auth
 * service can be exposed on its own without exposing the request API.
 */
async function listenOnOwnPort(port: number, prefix: string) {
  const { createServer } = await import('node:http')
  const server = await app.container.make('server')
  const logger = await app.container.make('logger')
  const httpServer = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (prefix === '' || path === prefix || path.startsWith(`${prefix}/`))
      return server.handle(req, res)
    res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8' })
    res.end(
      JSON.stringify({
        success: false,
        error: 'not_found',
        message: 'Only the authentication service is served on this port',
      })
    )
  })
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject)
    httpServer.listen(port, process.env.HOST || '0.0.0.0', () => resolve())
  })
  logger.info(`auth service also listening on port ${port}`)
  return httpServer
}
