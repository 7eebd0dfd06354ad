import { inject } from '@adonisjs/core'
import hash from '@adonisjs/core/services/hash'
import limiter from '@adonisjs/limiter/services/main'
import { Database } from '@adonisjs/lucid/database'
import User from '#models/user'
import { UserService } from '#core/services/user_service'
import { StampService } from '#core/services/stamp_service'
import { CredentialService } from '#core/services/credential_service'
import { passwordPolicy } from '#core/services/password_policy'
import { Clock } from './clock.js'
import { AuthUserService, type AuthUserRow } from './auth_user_service.js'
import { TotpService } from './totp_service.js'
import { RecoveryCodeService, looksLikeRecoveryCode } from './recovery_code_service.js'
import { SessionService } from './session_service.js'
import { AuthorizationService, type AuthorizationRequest } from './authorization_service.js'
import { digest, opaqueToken } from './secrets.js'
import { authError } from '../errors.js'
import { AuthConfig } from '../config.js'
import { serializeLoginSuccess, type PasswordPolicies } from '../serializers/login_serializer.js'

export interface ClientInfo {
  ip: string
  userAgent: string | null
}

export interface PasswordLoginOptions {
  /**
   * Requires TOTP (enrolment when there is none) for this user whatever the
   * policies say: the admin console requires it of administrators in
   * production (ADMIN_TOTP_REQUIRED).
   */
  requireTotp?: (user: User) => boolean
}

/** The second step a pending login waits for. */
type PendingKind = 'totp_setup' | 'totp_login' | 'password_change'

interface PendingLogin {
  id: number
  kind: PendingKind
  userId: number
  requestId: number | null
  totpSecret: string | null
  attempts: number
  expiresAt: number
  consumedAt: number | null
}

interface LoginSettings {
  setupTtlSeconds: number
  maxCodeAttempts: number
  throttle: { maxAttempts: number; window: string }
}

function loginSettingsOf(config: AuthConfig): LoginSettings {
  return {
    setupTtlSeconds: config.ttl.setupSeconds,
    maxCodeAttempts: config.totp.maxAttempts,
    throttle: { maxAttempts: config.login.maxAttempts, window: config.login.window },
  }
}

/** authenticationPolicies.password: core's one password policy, in the spec's shape. */
function passwordPolicies(): PasswordPolicies {
  return {
    minLength: passwordPolicy.rules.minLength,
    maxLength: passwordPolicy.rules.maxLength,
    requireUppercase: false,
    requireLowercase: false,
    requireDigit: false,
    requireSymbol: false,
  }
}

/**
 * Password login and its second steps: enrolment of an enforced TOTP
 * (setup_token), TOTP code of an enrolled user (login_token), forced password
 * change (passwordResetToken). Every completed login opens an auth session
 * and, when it began with an authorization request, consumes that request.
 *
 * The login and password go through core's CredentialService, the check
 * createOauthkey uses too: the same throttle counters (per login, per
 * address), the same limits, the same dummy hash for unknown logins.
 */
@inject()
export class LoginService {
  private settings: LoginSettings

  constructor(
    private db: Database,
    private clock: Clock,
    private stamps: StampService,
    private users: UserService,
    private credentials: CredentialService,
    private authUsers: AuthUserService,
    private totp: TotpService,
    private recovery: RecoveryCodeService,
    private sessions: SessionService,
    private authorizations: AuthorizationService,
    config: AuthConfig
  ) {
    this.settings = loginSettingsOf(config)
  }

  async passwordLogin(
    input: { login: string; password: string; code?: string; request_id?: string },
    client: ClientInfo,
    options: PasswordLoginOptions = {}
  ) {
    const request = await this.requestOf(input.request_id)
    // A TOTP code may follow: the login's failures are forgiven once the whole sign-in succeeds.
    const check = await this.credentials.verify(input.login, input.password, client.ip, {
      secondFactor: true,
    })
    if (!check.ok && check.reason === 'throttled') {
      throw authError(
        'too_many_requests',
        `Too many failed sign-in attempts, retry in ${check.retryAfter} seconds`,
        { retry_after: check.retryAfter }
      )
    }
    if (!check.ok) throw authError('invalid_credentials', 'Invalid login or password')
    const user = check.user
    const succeeded = () => this.credentials.succeeded(input.login)
    const authUser = await this.authUsers.ensure(user)

    if (this.authUsers.isEnrolled(authUser)) {
      if (!input.code) {
        const loginToken = await this.createPending('totp_login', user.id, request)
        return {
          success: true,
          twoFactorRequired: true,
          login_token: loginToken,
          expires_in: this.settings.setupTtlSeconds,
          passThroughParameters: request?.passThrough ?? {},
        }
      }
      try {
        await this.checkCode(
          authUser,
          authUser.totp_secret!,
          input.code,
          authUser.totp_last_step,
          true,
          true
        )
      } catch (error) {
        // A wrong code after a right password counts like a wrong password.
        await this.credentials.failed(input.login, client.ip)
        throw error
      }
      await succeeded()
      return this.complete(user, authUser, request, client)
    }
    await succeeded()

    if (this.authUsers.requiresTotp(authUser) || options.requireTotp?.(user)) {
      const secret = this.totp.newSecret()
      const setupToken = await this.createPending(
        'totp_setup',
        user.id,
        request,
        this.totp.seal(secret)
      )
      return {
        success: true,
        twoFactorSetupRequired: true,
        setup_token: setupToken,
        expires_in: this.settings.setupTtlSeconds,
        twoFactorData: { secret, qr_uri: this.totp.uri(secret, user.email ?? user.code) },
        passThroughParameters: request?.passThrough ?? {},
      }
    }
    return this.complete(user, authUser, request, client)
  }

  /** `POST {auth_url}/login/2fa/setup/confirm`: enrols the TOTP secret of the setup and completes the login. */
  async confirmSetup(input: { setup_token: string; code: string }, client: ClientInfo) {
    return this.secondStep('totp_setup', input.setup_token, input.code, client)
  }

  /** `POST {auth_url}/login/2fa`: the TOTP code of an enrolled user, for a login_token. */
  async confirmTotpLogin(input: { login_token: string; code: string }, client: ClientInfo) {
    return this.secondStep('totp_login', input.login_token, input.code, client)
  }

  private async secondStep(
    kind: 'totp_setup' | 'totp_login',
    token: string,
    code: string,
    client: ClientInfo
  ) {
    const pending = await this.loadPending(kind, token)
    const user = await this.users.findById(pending.userId)
    if (!user) throw authError('user_not_found', 'The account of this sign-in no longer exists')
    const request =
      pending.requestId === null ? null : await this.authorizations.findById(pending.requestId)
    if (pending.requestId !== null) this.authorizations.assertUsable(request)
    const authUser = await this.authUsers.ensure(user)

    const sealed = kind === 'totp_setup' ? pending.totpSecret : authUser.totp_secret
    if (!sealed)
      throw authError(
        'invalid_setup_token',
        'Two-factor authentication is not set up for this account any more'
      )
    if (kind === 'totp_setup') {
      const recoveryCodes = await this.enrol(pending, authUser, code)
      const completed = await this.complete(
        user,
        (await this.authUsers.find(user.id))!,
        request,
        client
      )
      // Shown once: the client keeps them for the day the authenticator is lost.
      return { ...completed, recoveryCodes }
    }
    try {
      await this.checkCode(authUser, sealed, code, authUser.totp_last_step, true, true)
    } catch (error) {
      await this.db.from('auth_pending_logins').where('id', pending.id).increment('attempts', 1)
      throw error
    }
    if (!(await this.consumePending(pending))) {
      throw authError('invalid_setup_token', 'This token was already used')
    }
    return this.complete(user, (await this.authUsers.find(user.id))!, request, client)
  }

  /**
   * Completes an enrolment (its pending setup and the first code): the secret
   * becomes the user's, and ten recovery codes are made and answered in clear.
   */
  private async enrol(pending: PendingLogin, authUser: AuthUserRow, code: string) {
    let step: number | null
    try {
      step = await this.checkCode(authUser, pending.totpSecret!, code, null, false)
    } catch (error) {
      await this.db.from('auth_pending_logins').where('id', pending.id).increment('attempts', 1)
      throw error
    }
    if (!(await this.consumePending(pending))) {
      throw authError('invalid_setup_token', 'This token was already used')
    }
    await this.authUsers.update(authUser.user_id, {
      totp_secret: pending.totpSecret,
      totp_enabled_at: this.clock.now(),
      totp_last_step: step,
    })
    return this.recovery.regenerate(authUser.user_id)
  }

  /**
   * A signed-in user's own enrolment (the admin console's Account page): a
   * setup token and the new secret with its otpauth URI, confirmed by
   * `confirmEnrolment` with a first code. Opens no session.
   */
  async startEnrolment(user: User) {
    const authUser = await this.authUsers.ensure(user)
    if (this.authUsers.isEnrolled(authUser))
      throw authError('invalid_setup_token', 'Two-factor authentication is already set up')
    const secret = this.totp.newSecret()
    const token = await this.createPending('totp_setup', user.id, null, this.totp.seal(secret))
    return { token, secret, uri: this.totp.uri(secret, user.email ?? user.code) }
  }

  /** Confirms `startEnrolment` with a first code: answers the ten recovery codes, in clear this once. */
  async confirmEnrolment(user: User, token: string, code: string): Promise<string[]> {
    const pending = await this.loadPending('totp_setup', token)
    if (pending.userId !== user.id)
      throw authError('invalid_setup_token', 'Unknown or already used token; start again')
    return this.enrol(pending, await this.authUsers.ensure(user), code)
  }

  /** `POST {auth_url}/password/change`: the forced password change announced by mustChangePassword. */
  async changePassword(input: { password_reset_token: string; password: string }) {
    const problems = passwordPolicy.problems(input.password)
    if (problems.length > 0) {
      throw authError('validation_error', 'The new password does not meet the password policy', {
        errors: { password: problems },
      })
    }
    const pending = await this.loadPending('password_change', input.password_reset_token)
    const user = await this.users.findById(pending.userId)
    if (!user) throw authError('user_not_found', 'The account no longer exists')
    if (!(await this.consumePending(pending)))
      throw authError('invalid_setup_token', 'This token was already used')
    const passwordHash = await hash.make(input.password)
    await this.stamps.write(async ({ trx, stamp }) => {
      const fresh = await User.query({ client: trx }).where('id', user.id).firstOrFail()
      fresh.password = passwordHash
      fresh.sstamp = stamp
      await fresh.save()
    })
    await this.authUsers.update(user.id, { must_change_password: false })
    return { success: true, message: 'The password was changed' }
  }

  private async complete(
    user: User,
    authUser: AuthUserRow,
    request: AuthorizationRequest | null,
    client: ClientInfo
  ) {
    if (request && !(await this.authorizations.consume(request))) {
      throw authError(
        'authorization_request_expired',
        'The authorization request was already used; start the sign-in again'
      )
    }
    const tokens = await this.sessions.open(user, authUser.uuid, {
      clientId: request?.clientId ?? null,
      nonce: request?.nonce ?? null,
      ip: client.ip,
      userAgent: client.userAgent,
    })
    const passwordResetToken = authUser.must_change_password
      ? await this.createPending('password_change', user.id, null)
      : null
    return serializeLoginSuccess({
      tokens,
      user,
      uuid: authUser.uuid,
      request,
      passwordResetToken,
      policies: passwordPolicies(),
    })
  }

  private async requestOf(publicId: string | undefined) {
    if (!publicId) return null
    const request = await this.authorizations.findByPublicId(publicId)
    if (!request) throw authError('unknown_request', 'request_id names no authorization request')
    this.authorizations.assertUsable(request)
    return request
  }

  /**
   * Checks a TOTP code and answers its time step. Wrong (or replayed) codes
   * are counted per user across every way of giving one (login body,
   * login_token, setup_token), so asking for new tokens buys no new guesses.
   * `consume` records the step as used (codes of an enrolled secret).
   * `allowRecovery`: at sign-in, a one-time recovery code may stand in for
   * the TOTP code (answers null: no time step), under the same counter.
   */
  private async checkCode(
    authUser: AuthUserRow,
    sealed: string,
    code: string,
    afterStep: number | null,
    consume: boolean,
    allowRecovery = false
  ): Promise<number | null> {
    const { maxAttempts, window } = this.settings.throttle
    const throttle = limiter.use({
      requests: maxAttempts,
      duration: window,
      blockDuration: window,
    })
    const key = `auth:totp:${authUser.uuid}`
    if (await throttle.isBlocked(key)) {
      const retryAfter = Math.max(1, await throttle.availableIn(key))
      throw authError('too_many_requests', `Too many wrong codes, retry in ${retryAfter} seconds`, {
        retry_after: retryAfter,
      })
    }
    if (allowRecovery && looksLikeRecoveryCode(code)) {
      if (!(await this.recovery.consume(authUser.user_id, code))) {
        await throttle.increment(key)
        throw authError('invalid_code', 'The recovery code is invalid or was already used')
      }
      await throttle.delete(key)
      return null
    }
    const step = await this.totp.check(this.totp.open(sealed), code, afterStep)
    if (step === null || (consume && !(await this.totp.consumeStep(authUser.user_id, step)))) {
      await throttle.increment(key)
      throw authError('invalid_code', 'The verification code is invalid or was already used')
    }
    await throttle.delete(key)
    return step
  }

  private async createPending(
    kind: PendingKind,
    userId: number,
    request: AuthorizationRequest | null,
    sealedSecret?: string
  ) {
    const token = opaqueToken(kind === 'password_change' ? 'pr_' : 'st_')
    const now = this.clock.now()
    await this.db.table('auth_pending_logins').insert({
      token_hash: digest(token),
      kind,
      user_id: userId,
      request_id: request?.id ?? null,
      totp_secret: sealedSecret ?? null,
      attempts: 0,
      created_at: now,
      expires_at: now + this.settings.setupTtlSeconds * 1000,
    })
    return token
  }

  private async loadPending(kind: PendingKind, token: string): Promise<PendingLogin> {
    const row = await this.db
      .from('auth_pending_logins')
      .where('token_hash', digest(token.trim()))
      .where('kind', kind)
      .first()
    if (!row || row.consumed_at !== null || Number(row.attempts) >= this.settings.maxCodeAttempts) {
      throw authError('invalid_setup_token', 'Unknown or already used token; sign in again')
    }
    if (Number(row.expires_at) <= this.clock.now()) {
      throw authError('setup_token_expired', 'The token has expired; sign in again')
    }
    return {
      id: Number(row.id),
      kind: row.kind,
      userId: Number(row.user_id),
      requestId: row.request_id === null ? null : Number(row.request_id),
      totpSecret: row.totp_secret ?? null,
      attempts: Number(row.attempts),
      expiresAt: Number(row.expires_at),
      consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
    }
  }

  private async consumePending(pending: PendingLogin) {
    const updated = await this.db
      .from('auth_pending_logins')
      .where('id', pending.id)
      .whereNull('consumed_at')
      .update({ consumed_at: this.clock.now() })
    return Number(updated) === 1
  }

  /** Drops pending logins, authorization requests and refresh tokens that expired more than a day ago. */
  async purgeExpired() {
    const cutoff = this.clock.now() - 24 * 3600 * 1000
    await this.db.from('auth_pending_logins').where('expires_at', '<', cutoff).delete()
    await this.db.from('auth_requests').where('expires_at', '<', cutoff).delete()
    await this.db.from('auth_refresh_tokens').where('expires_at', '<', cutoff).delete()
  }
}
