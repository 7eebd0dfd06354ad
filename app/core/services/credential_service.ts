import type { HashService } from '@adonisjs/core/types'
import type { Limiter, LimiterManager } from '@adonisjs/limiter'
import type User from '#models/user'
import type { UserService } from './user_service.js'

export interface CredentialSettings {
  /** Failed checks allowed per login name within `window`. */
  maxAttempts: number
  /** Failed checks allowed per client address within `window` (offices and NATs share one). */
  maxAttemptsPerAddress: number
  /** Counting window and block duration (`15 mins`, `1 hour`...). */
  window: string
}

/** What a credential check answers. Each entry point words its own refusal. */
export type CredentialCheck =
  | { ok: true; user: User }
  /** Unknown login or wrong password (indistinguishable on purpose). */
  | { ok: false; reason: 'invalid' }
  /** The login or the address is over its limit: every attempt is refused until `retryAfter` s. */
  | { ok: false; reason: 'throttled'; retryAfter: number }

export interface VerifyOptions {
  /**
   * The user to check the password against when no user has this login
   * (createOauthkey's createUserAccount creates one). Runs after the throttle
   * check; what it throws reaches the caller unchanged.
   */
  whenUnknown?: () => Promise<User | null>
  /**
   * A second factor follows the password (the auth service's TOTP): a right
   * password does not yet clear the login's counter; the caller calls
   * `succeeded` once the sign-in completes and `failed` when the second factor
   * is wrong, so the same counters cover both factors.
   */
  secondFactor?: boolean
}

/** The password of no account: unknown logins verify against its hash. */
const DUMMY_PASSWORD = 'no account has this password'

/**
 * The one check of a login and a password, shared by every way of signing in:
 * api.php createOauthkey (docs/spec/service-interface.md 4.A.2, 5.A), the auth
 * service's `{auth_url}/login`, the admin console's sign-in.
 *
 * - Failed checks count against ONE counter per login name and ONE per client
 *   address, whichever entry point they came through, so a guesser does not
 *   get the attempts once per endpoint. Over either limit every attempt is
 *   refused (even a right one) until the window has passed.
 * - An unknown login verifies the password against a dummy hash: both paths
 *   cost exactly one hash verification, so the answer time does not tell
 *   which logins exist.
 * - A success clears the login's counter, never the address's (one address
 *   may try many logins).
 */
export class CredentialService {
  private byLogin: Limiter
  private byAddress: Limiter
  /** Started at construction: the first unknown login must not pay a hash.make on top. */
  private dummyHash: Promise<string>

  constructor(
    private users: UserService,
    private hash: HashService,
    limiter: LimiterManager<any>,
    settings: CredentialSettings
  ) {
    const use = (requests: number) =>
      limiter.use({ requests, duration: settings.window, blockDuration: settings.window })
    this.byLogin = use(settings.maxAttempts)
    this.byAddress = use(settings.maxAttemptsPerAddress)
    this.dummyHash = hash.make(DUMMY_PASSWORD)
    // Never an unhandled rejection: a failure shows on the first unknown login instead.
    this.dummyHash.catch(() => {})
  }

  /** The limiter keys: one namespace for every entry point. */
  private keys(login: string, ip: string) {
    return { login: `login:${login.trim().toLowerCase()}`, address: `address:${ip}` }
  }

  async verify(
    login: string,
    password: string,
    ip: string,
    options: VerifyOptions = {}
  ): Promise<CredentialCheck> {
    const keys = this.keys(login, ip)
    for (const [limiter, key] of [
      [this.byLogin, keys.login],
      [this.byAddress, keys.address],
    ] as const) {
      if (await limiter.isBlocked(key)) {
        return {
          ok: false,
          reason: 'throttled',
          retryAfter: Math.max(1, await limiter.availableIn(key)),
        }
      }
    }

    let user = await this.users.findByLogin(login)
    if (!user && options.whenUnknown) user = await options.whenUnknown()
    if (!user) {
      await this.hash.verify(await this.dummyHash, password)
      await this.failed(login, ip)
      return { ok: false, reason: 'invalid' }
    }
    // A disabled account (admin console) signs in nowhere; it counts as a wrong password, after
    // the same one hash verification (a disabled account must not answer faster).
    const matches = await this.users.verifyPassword(user, password)
    if (user.disabledAt || !matches) {
      await this.failed(login, ip)
      return { ok: false, reason: 'invalid' }
    }
    if (!options.secondFactor) await this.succeeded(login)
    return { ok: true, user }
  }

  /** Counts a failed sign-in (a wrong password, or a wrong second factor after a right one). */
  async failed(login: string, ip: string) {
    const keys = this.keys(login, ip)
    await this.byLogin.increment(keys.login)
    await this.byAddress.increment(keys.address)
  }

  /** A completed sign-in forgives the login's failures (not the address's). */
  async succeeded(login: string) {
    await this.byLogin.delete(this.keys(login, '').login)
  }

  /** Forgets the failures counted for a login and/or an address (admin unblock, tests). */
  async reset(input: { login?: string; ip?: string }) {
    const keys = this.keys(input.login ?? '', input.ip ?? '')
    if (input.login !== undefined) await this.byLogin.delete(keys.login)
    if (input.ip !== undefined) await this.byAddress.delete(keys.address)
  }
}
