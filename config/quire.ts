import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { isAbsolute, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import env from '#start/env'
import { checkoutRoot } from '../bin/checkout.js'

/** Relative paths resolve against the checkout, also from the compiled build (bin/checkout.ts). */
const appRoot = fileURLToPath(checkoutRoot(new URL('../', import.meta.url)))

/** The data folder (embedded database, generated secrets), created when missing. */
export const dataDir = (() => {
  const dir = env.get('DATA_DIR', 'data')
  const absolute = isAbsolute(dir) ? dir : join(appRoot, dir)
  mkdirSync(absolute, { recursive: true })
  return absolute
})()

/**
 * APP_KEY signs and encrypts; a laptop install has no .env, so one is
 * generated once and kept in the data folder.
 */
export function resolveAppKey(): string {
  const fromEnv = env.get('APP_KEY')
  if (fromEnv) return fromEnv
  const file = join(dataDir, 'app_key')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  const key = randomBytes(32).toString('base64url')
  writeFileSync(file, key, { mode: 0o600 })
  return key
}

const quireConfig = {
  /** Envelope label: createdVNB = `${envLabel}-${apiVersion}`. */
  envLabel: env.get('QUIRE_ENV', 'live'),
  apiVersion: env.get('QUIRE_API_VERSION', '6.49q/6.49'),
  /**
   * The environment prefixes of the request API (`/live/api.php`, `/dev/api.php`):
   * clients are configured for one environment or another, and all reach this server.
   */
  urlPrefixes: env
    .get('QUIRE_URL_PREFIXES', 'live,dev')
    .split(',')
    .map((prefix) => prefix.trim().replace(/^\/+|\/+$/g, ''))
    .filter((prefix) => prefix !== '')
    .map((prefix) => `/${prefix}`),
  redisEnabled: Boolean(env.get('REDIS_HOST')),
  sessions: {
    /** Seconds a sesskey may stay unused before it expires; 0 = never. */
    idleTtl: env.get('SESSION_IDLE_TTL', 0),
  },
  /** The one sign-in throttle (CredentialService), shared by every endpoint that checks a password. */
  login: {
    maxAttempts: env.get('LOGIN_MAX_ATTEMPTS', 10),
    maxAttemptsPerAddress: env.get('LOGIN_MAX_ATTEMPTS_PER_ADDRESS', 100),
    window: env.get('LOGIN_WINDOW', '15 mins'),
  },
  createUserAccount: env.get('QUIRE_CREATE_USER_ACCOUNT', false),
}

export default quireConfig
