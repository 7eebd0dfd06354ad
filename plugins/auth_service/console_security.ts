import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type User from '#models/user'
import type { PageRequest } from '#core/paging'
import {
  ConsoleSecurity,
  ConsoleSecurityError,
  type SignedIn,
  type SignInClient,
  type SignInStep,
} from '#core/auth/console_security'
import { AuthError } from './errors.js'
import { AuditLog, type AuditActor } from '#core/audit/audit_log'
import { AuthUserService } from './services/auth_user_service.js'
import { LoginService } from './services/login_service.js'
import { RecoveryCodeService, SIGN_IN_CODE_PATTERN } from './services/recovery_code_service.js'
import { SessionService } from './services/session_service.js'

/**
 * The auth service's side of the console's security contract (the kernel's
 * ConsoleSecurity): console sign-ins are auth-service logins (password, then
 * TOTP or an enrolment), so they are listed and revocable like any session.
 * Bound in this plugin's provider.
 */
@inject()
export class AuthServiceConsoleSecurity extends ConsoleSecurity {
  readonly signInCodePattern = SIGN_IN_CODE_PATTERN

  constructor(
    private logins: LoginService,
    private sessions: SessionService,
    private authUsers: AuthUserService,
    private recovery: RecoveryCodeService,
    private audit: AuditLog
  ) {
    super()
  }

  async signInWithPassword(
    input: { login: string; password: string },
    client: SignInClient,
    requireTotp: (user: User) => boolean
  ): Promise<SignInStep> {
    const result: Record<string, any> = await translated(() =>
      this.logins.passwordLogin(input, client, { requireTotp })
    )
    if (result.twoFactorRequired) return { step: 'totp', token: result.login_token }
    if (result.twoFactorSetupRequired)
      return {
        step: 'setup',
        token: result.setup_token,
        secret: result.twoFactorData.secret,
        uri: result.twoFactorData.qr_uri,
      }
    return signedIn(result)
  }

  async signInWithCode(
    pending: { step: 'totp' | 'setup'; token: string },
    code: string,
    client: SignInClient
  ): Promise<SignedIn> {
    const result = await translated(() =>
      pending.step === 'setup'
        ? this.logins.confirmSetup({ setup_token: pending.token, code }, client)
        : this.logins.confirmTotpLogin({ login_token: pending.token, code }, client)
    )
    return signedIn(result)
  }

  async endSignIn(refreshToken: string) {
    await this.sessions.revokeByRefreshToken(refreshToken).catch(() => {})
  }

  async isSessionOpen(userId: number, sessionId: string) {
    const open = await db
      .from('auth_sessions')
      .where('public_id', sessionId)
      .where('user_id', userId)
      .whereNull('revoked_at')
      .first()
    return Boolean(open)
  }

  async twoFactorOf(user: User) {
    const authUser = await this.authUsers.find(user.id)
    const enrolled = authUser ? this.authUsers.isEnrolled(authUser) : false
    return {
      enrolled,
      required: authUser ? this.authUsers.requiresTotp(authUser) : false,
      policy: authUser?.totp_policy ?? null,
      recoveryCodesLeft: enrolled ? await this.recovery.remaining(user.id) : 0,
    }
  }

  startEnrolment(user: User) {
    return translated(() => this.logins.startEnrolment(user))
  }

  confirmEnrolment(user: User, token: string, code: string) {
    return translated(() => this.logins.confirmEnrolment(user, token, code))
  }

  regenerateRecoveryCodes(user: User) {
    return this.authUsers.regenerateRecoveryCodes(user)
  }

  setApiPasswordDisabled(user: User, disabled: boolean) {
    return this.authUsers.setApiPasswordDisabled(user, disabled)
  }

  async resetTwoFactor(user: User, by?: AuditActor) {
    await this.authUsers.resetTotp(user, by)
  }

  async setTwoFactorPolicy(user: User, policy: 'required' | 'optional' | null, by?: AuditActor) {
    await this.authUsers.setPolicy(user, policy, by)
  }

  sessionsOf(userId: number, request: PageRequest) {
    return this.sessions.pageActive(userId, request)
  }

  /** An administrator ends one signed-in session (the Users page): audited here, its one entry point. */
  async endSession(userId: number, sessionId: string, reason: string, by?: AuditActor) {
    await this.sessions.revoke({ userId, sessionId }, reason)
    if (by)
      await this.audit.record({
        actor: by,
        kind: 'session.revoked',
        target: await this.audit.userTarget(userId),
        changes: { signedInSession: { from: sessionId, to: null } },
      })
  }

  async endAllSessions(userId: number, reason: string) {
    await this.sessions.revokeAll(userId, reason)
  }
}

/** A completed login as the console keeps it. */
function signedIn(result: Record<string, any>): SignedIn {
  return {
    step: 'done',
    userCode: String(result.user.code),
    sessionId: sessionIdOf(String(result.jwt)),
    refreshToken: String(result.refresh_token),
    ...(Array.isArray(result.recoveryCodes) ? { recoveryCodes: result.recoveryCodes } : {}),
  }
}

/** The public id (`sid` claim) of an access token this service issued, read from its payload. */
function sessionIdOf(jwt: string): string {
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'))
  return String(payload.sid)
}

/** The auth service's refusals in the console's terms; anything else is not a refusal. */
async function translated<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    if (!(error instanceof AuthError)) throw error
    switch (error.code) {
      case 'too_many_requests':
        throw new ConsoleSecurityError('throttled', error.message)
      case 'invalid_code':
        throw new ConsoleSecurityError('wrong_code', 'The code is wrong or was already used')
      case 'invalid_setup_token':
      case 'setup_token_expired':
      case 'user_not_found':
        throw new ConsoleSecurityError('expired', error.message)
      case 'invalid_credentials':
        throw new ConsoleSecurityError('refused', 'Invalid login or password')
      default:
        throw new ConsoleSecurityError('invalid', error.message)
    }
  }
}
