import type { Server as NodeServer } from 'node:http'
import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import authConfig, { AuthConfig, deriveKey } from './config.js'
import { Clock } from './services/clock.js'
import { SecretBox } from './services/secrets.js'
import { TokenService } from './services/token_service.js'
import { UserKeyedCache } from '#core/invalidation/user_keyed_cache'
import {
  LocalInvalidationBus,
  NoInvalidationBus,
  RedisInvalidationBus,
  type InvalidationBus,
} from '#core/invalidation/invalidation_bus'
import { AuthUserService } from './services/auth_user_service.js'
import { TotpService } from './services/totp_service.js'
import { AuthorizationService } from './services/authorization_service.js'
import { SessionService, SessionStateBus, type SessionState } from './services/session_service.js'
import { LoginService } from './services/login_service.js'
import { ConsoleSecurity } from '#core/auth/console_security'
import { AuthServiceConsoleSecurity } from './console_security.js'
import AuthController from './http/auth_controller.js'
import SessionsController from './http/sessions_controller.js'

/** Past this many auth sessions the session-state cache starts over. */
const SESSION_CACHE_MAX_ENTRIES = 200_000

/**
 * The auth service's provider. register() binds its services by class (with
 * factories where boot-time choices are made: the token keys, the TOTP
 * sealing key, the session-state bus); its routes are declared in the manifest
 * (plugin.ts). When serving, start() subscribes the session-state bus before the
 * first bearer check can fill a cache, and ready() opens the optional second
 * port once the application listens.
 */
export default class AuthServiceProvider {
  /** Set once something asked for the bus: shutdown then has subscriptions to end. */
  private bus: InvalidationBus<SessionState> | null = null
  private purgeTimer: NodeJS.Timeout | null = null
  private ownPortServer: NodeServer | null = null

  constructor(protected app: ApplicationService) {}

  /** Environments that serve HTTP: only they keep a session-state cache and listen on AUTH_PORT. */
  private get serving() {
    return ['web', 'test'].includes(this.app.getEnvironment())
  }

  register() {
    this.app.container.singleton(AuthConfig, () => authConfig)
    bindSingletons(this.app.container, [Clock])
    this.registerSecretBox()
    this.registerTokens()
    this.registerSessionStateBus()
    // The console's sign-in and security pages go through the kernel's contract, provided here.
    this.app.container.singleton(ConsoleSecurity, (resolver) =>
      resolver.make(AuthServiceConsoleSecurity)
    )
    bindSingletons(this.app.container, [
      AuthUserService,
      TotpService,
      AuthorizationService,
      SessionService,
      LoginService,
      // Stateless: one instance each, rather than one built by the container per request.
      AuthController,
      SessionsController,
    ])
  }

  /** TOTP seeds are sealed with a key derived from APP_KEY (stable across restarts and instances). */
  private registerSecretBox() {
    this.app.container.singleton(SecretBox, () => new SecretBox(deriveKey('totp-secrets')))
  }

  /** The JWT keys are imported once, before the first token is signed or verified. */
  private registerTokens() {
    this.app.container.singleton(TokenService, async (resolver) => {
      const config = await resolver.make(AuthConfig)
      return new TokenService(
        config.jwtKeys,
        config.issuer,
        config.ttl.accessSeconds,
        await resolver.make(Clock)
      ).init()
    })
  }

  /**
   * Where the session-state cache may be used without delaying a revocation:
   * with Redis (the bus reaches every instance and waits for them), or on the
   * embedded SQLite database (one process). MySQL without Redis may mean
   * several instances that could not tell each other: no cache. With Redis, a
   * process that serves no requests (ace commands) keeps no cache but still
   * publishes its revocations to the instances that do. The bus is started
   * before anything receives it.
   */
  private registerSessionStateBus() {
    this.app.container.singleton(SessionStateBus, async (resolver) => {
      const config = await resolver.make(AuthConfig)
      const cache = new UserKeyedCache<SessionState>({
        ttlMs: config.sessionCache.ttlSeconds * 1000,
        maxEntries: SESSION_CACHE_MAX_ENTRIES,
      })
      const db = await resolver.make('lucid.db')
      let bus: InvalidationBus<SessionState>
      if (config.sessionCache.mode === 'off') bus = new NoInvalidationBus()
      else if (config.redisEnabled) {
        const redis = await resolver.make('redis')
        bus = new RedisInvalidationBus(
          redis.connection('main'),
          this.serving ? cache : null,
          await resolver.make('logger'),
          `${config.redisPrefix}auth-sessions`
        )
      } else if (db.primaryConnectionName === 'sqlite') bus = new LocalInvalidationBus(cache)
      else bus = new NoInvalidationBus()
      await bus.start()
      this.bus = bus
      return bus
    })
  }

  async boot() {
    // dropAllSessions (api.php) keeps one sesskey and ends every other session: auth sessions too,
    // so that both worlds agree. (revoke-others, which keeps an auth session, reports no kept sesskey.)
    const emitter = await this.app.container.make('emitter')
    emitter.on('core:sessions_revoked', async ({ userId, keptSessionId, reason }) => {
      if (keptSessionId === null) return
      const sessions = await this.app.container.make(SessionService)
      await sessions.revokeAll(userId, reason.slice(0, 64))
    })
  }

  async start() {
    if (!this.serving) return
    await this.app.container.make(SessionStateBus)
    const login = await this.app.container.make(LoginService)
    this.purgeTimer = setInterval(() => void login.purgeExpired().catch(() => {}), 3600_000).unref()
  }

  async ready() {
    if (authConfig.port && this.app.getEnvironment() === 'web') {
      this.ownPortServer = await this.listenOnOwnPort(authConfig.port, authConfig.prefix)
    }
  }

  async shutdown() {
    if (this.purgeTimer) clearInterval(this.purgeTimer)
    const server = this.ownPortServer
    if (server) await new Promise((resolve) => server.close(resolve))
    await this.bus?.stop()
  }

  /**
   * AUTH_PORT: the same application also answers on a second port, where only
   * {auth_url} routes are served (anything else is a JSON 404), so the auth
   * service can be exposed on its own without exposing the request API.
   */
  private async listenOnOwnPort(port: number, prefix: string) {
    const { createServer } = await import('node:http')
    const server = await this.app.container.make('server')
    const logger = await this.app.container.make('logger')
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
      httpServer.listen(port, authConfig.host, () => resolve())
    })
    logger.info(`auth service also listening on port ${port}`)
    return httpServer
  }
}
