import type { ApplicationService } from '@adonisjs/core/types'
import authConfig, { deriveKey, type AuthConfig } from '../config.js'
import clock from './clock.js'
import { SecretBox } from './secrets.js'
import { TokenService } from './token_service.js'
import { SessionStateCache } from './session_state_cache.js'
import {
  LocalRevocationBus,
  NoRevocationBus,
  RedisRevocationBus,
  type RevocationBus,
} from './revocation_bus.js'
import { AuthUserService } from './auth_user_service.js'
import { TotpService } from './totp_service.js'
import { AuthorizationService } from './authorization_service.js'
import { SessionService } from './session_service.js'
import { LoginService } from './login_service.js'

/** Every service of the plugin, wired once per process. */
export interface AuthServices {
  config: AuthConfig
  tokens: TokenService
  cache: SessionStateCache | null
  bus: RevocationBus
  authUsers: AuthUserService
  totp: TotpService
  authorizations: AuthorizationService
  sessions: SessionService
  login: LoginService
}

/**
 * Where the session-state cache may be used without delaying a revocation:
 * with Redis (the bus reaches every instance and waits for them), or on the
 * embedded SQLite database (one process). MySQL without Redis may mean
 * several instances that could not tell each other: no cache.
 */
function chooseBus(
  app: ApplicationService,
  cache: SessionStateCache,
  redis: any,
  logger: any,
  dbConnection: string
): { bus: RevocationBus; cache: SessionStateCache | null } {
  const listens = ['web', 'test'].includes(app.getEnvironment())
  if (authConfig.sessionCache.mode === 'off') return { bus: new NoRevocationBus(), cache: null }
  if (authConfig.redisEnabled && listens) {
    return {
      bus: new RedisRevocationBus(redis.connection('main'), cache, logger, authConfig.redisPrefix),
      cache,
    }
  }
  if (dbConnection === 'sqlite') return { bus: new LocalRevocationBus(cache), cache }
  return { bus: new NoRevocationBus(), cache: null }
}

export async function createAuthServices(app: ApplicationService): Promise<AuthServices> {
  const db = await app.container.make('lucid.db')
  const logger = await app.container.make('logger')
  const limiter = await app.container.make('limiter.manager')
  const stamps = await app.container.make('quire.stamps')
  const users = await app.container.make('quire.users')
  const redis = authConfig.redisEnabled ? await app.container.make('redis') : null

  const tokens = await new TokenService(
    authConfig.jwtKeys,
    authConfig.issuer,
    authConfig.ttl.accessSeconds,
    clock
  ).init()
  const chosen = chooseBus(
    app,
    new SessionStateCache(authConfig.sessionCache.ttlSeconds * 1000),
    redis,
    logger,
    db.primaryConnectionName
  )
  await chosen.bus.start()

  const authUsers = new AuthUserService(db, clock, authConfig.totp.policy)
  const totp = new TotpService(
    db,
    clock,
    new SecretBox(deriveKey('totp-secrets')),
    authConfig.issuer
  )
  const authorizations = new AuthorizationService(db, clock, authConfig.ttl.requestSeconds)
  const sessions = new SessionService(
    db,
    clock,
    tokens,
    users,
    authUsers,
    chosen.cache,
    chosen.bus,
    authConfig.ttl.refreshSeconds
  )
  const login = new LoginService(
    db,
    clock,
    stamps,
    users,
    authUsers,
    totp,
    sessions,
    authorizations,
    limiter,
    {
      setupTtlSeconds: authConfig.ttl.setupSeconds,
      maxCodeAttempts: authConfig.totp.maxAttempts,
      throttle: { maxAttempts: authConfig.login.maxAttempts, window: authConfig.login.window },
      policies: {
        minLength: authConfig.password.minLength,
        maxLength: 128,
        requireUppercase: false,
        requireLowercase: false,
        requireDigit: false,
        requireSymbol: false,
      },
    }
  )
  return {
    config: authConfig,
    tokens,
    cache: chosen.cache,
    bus: chosen.bus,
    authUsers,
    totp,
    authorizations,
    sessions,
    login,
  }
}
