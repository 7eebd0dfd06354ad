import { hkdfSync } from 'node:crypto'
import env from '#start/env'
import settings from '#core/settings/main'
import quireConfig from '#config/quire'
import { appKey } from '#config/app'

export interface JwtKey {
  kid: string
  secret: Uint8Array
}

/** Keys derived from the app key are stable across restarts and instances sharing APP_KEY. */
export function deriveKey(purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', appKey.release(), 'quire-auth-service', purpose, length))
}

/**
 * AUTH_JWT_KEYS is `kid:secret,kid:secret`: the first key signs, every key
 * verifies, so a new key is rolled out by putting it first and the old one is
 * dropped once the longest access-token lifetime has passed.
 */
export function parseJwtKeys(raw: string | undefined): JwtKey[] {
  if (!raw || raw.trim() === '') return [{ kid: 'app-1', secret: deriveKey('jwt-hs256') }]
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const separator = entry.indexOf(':')
      if (separator <= 0)
        throw new Error(`AUTH_JWT_KEYS: "${entry.slice(0, 8)}..." is not of the form kid:secret`)
      const secret = entry.slice(separator + 1)
      if (secret.length < 32)
        throw new Error(
          `AUTH_JWT_KEYS: the secret of kid "${entry.slice(0, separator)}" is shorter than 32 characters`
        )
      return { kid: entry.slice(0, separator), secret: new TextEncoder().encode(secret) }
    })
}

function normalizePrefix(prefix: string) {
  const trimmed = prefix.trim().replace(/\/+$/, '')
  if (trimmed === '') return ''
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

/**
 * The auth service's settings (AUTH_* variables, plus the shared login
 * throttle and Redis settings). A class so that the container can hand it to
 * the services by type: `constructor(private config: AuthConfig)`.
 */
export class AuthConfig {
  /** {auth_url} path on this server (and on AUTH_PORT when set). */
  readonly prefix = normalizePrefix(env.get('AUTH_URL_PREFIX', '/auth'))
  /** A second listening port serving only the auth routes (none by default). */
  readonly port = env.get('AUTH_PORT')
  /** The interface that port listens on (the server's HOST). */
  readonly host = env.get('HOST', '0.0.0.0')
  readonly issuer = env.get('AUTH_ISSUER', 'Quire')
  readonly jwtKeys = parseJwtKeys(env.get('AUTH_JWT_KEYS'))
  readonly ttl = {
    accessSeconds: env.get('AUTH_ACCESS_TTL', 900),
    refreshSeconds: env.get('AUTH_REFRESH_TTL', 30 * 24 * 3600),
    setupSeconds: env.get('AUTH_SETUP_TTL', 600),
    requestSeconds: env.get('AUTH_REQUEST_TTL', 600),
  }
  readonly totp = {
    policy: env.get('AUTH_TOTP_POLICY', 'optional'),
    /** Wrong codes allowed on one setup or 2FA login token before it is burnt. */
    maxAttempts: 5,
  }
  /** The kernel's login throttle (LOGIN_*): the password check is core's CredentialService. */
  readonly login = quireConfig.login
  readonly revokeOthers = {
    /** The setting auth_service.revokeMaxRequests, read on every call (changeable at runtime). */
    get maxRequests() {
      return settings.integer('auth_service.revokeMaxRequests')
    },
    window: env.get('AUTH_REVOKE_WINDOW', '1 min'),
  }
  readonly sessionCache = {
    mode: env.get('AUTH_SESSION_CACHE', 'auto'),
    ttlSeconds: env.get('AUTH_SESSION_CACHE_TTL', 30),
  }
  readonly redisEnabled = quireConfig.redisEnabled
  readonly redisPrefix = env.get('REDIS_PREFIX', 'quire:')
}

const authConfig = new AuthConfig()

export default authConfig
