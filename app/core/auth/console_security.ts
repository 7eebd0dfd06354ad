import type User from '#models/user'
import type { AuditActor } from '#core/audit/audit_log'
import type { Paged, PageRequest } from '#core/paging'

/**
 * Why a console sign-in or security step was refused, in the console's terms
 * (the provider maps its own errors to these): `refused` (wrong login,
 * password, or an account that may not sign in), `throttled` (too many
 * failures: the message says when to retry), `wrong_code` (a TOTP or recovery
 * code that is wrong or used), `expired` (a pending sign-in or enrolment that
 * is gone: start again), `invalid` (a step that does not apply, the message
 * says why).
 */
export class ConsoleSecurityError extends Error {
  constructor(
    readonly code: 'refused' | 'throttled' | 'wrong_code' | 'expired' | 'invalid',
    message: string
  ) {
    super(message)
  }
}

/** Where a sign-in request comes from (throttling and the session's record). */
export interface SignInClient {
  ip: string
  userAgent: string | null
}

/** A sign-in that went through: the session it opened. */
export interface SignedIn {
  step: 'done'
  userCode: string
  /** The session's public id: the console checks it on every request. */
  sessionId: string
  /** Ends the session at sign-out. */
  refreshToken: string
  /** After an enrolment: the ten recovery codes, shown once. */
  recoveryCodes?: string[]
}

/** What the password step leads to: a session, a TOTP code to ask for, or an enrolment first. */
export type SignInStep =
  | SignedIn
  | { step: 'totp'; token: string }
  | { step: 'setup'; token: string; secret: string; uri: string }

/** One of a user's signed-in sessions (apps, browsers, the console). */
export interface SignedInSession {
  id: string
  [detail: string]: unknown
}

/**
 * What the admin console needs of the authentication provider: sign-in with
 * a second factor, the signed-in administrator's own security (Account page),
 * a user's second factor and sessions (Users page), and whether a console
 * session is still open. The kernel declares it; a plugin provides it (the
 * auth_service plugin binds its implementation in its provider), so the
 * console depends on this contract and never on a plugin's internals.
 */
export abstract class ConsoleSecurity {
  /** What a code field accepts at sign-in: a TOTP code, or a recovery code. */
  abstract readonly signInCodePattern: RegExp

  /** Login and password; `requireTotp` adds the console's own requirement of a second factor. */
  abstract signInWithPassword(
    input: { login: string; password: string },
    client: SignInClient,
    requireTotp: (user: User) => boolean
  ): Promise<SignInStep>

  /** The code that follows a `totp` or `setup` step. */
  abstract signInWithCode(
    pending: { step: 'totp' | 'setup'; token: string },
    code: string,
    client: SignInClient
  ): Promise<SignedIn>

  /** Ends a session opened by a sign-in (sign-out, or a refused administrator). */
  abstract endSignIn(refreshToken: string): Promise<void>

  /** Whether a console session is still open (not revoked or expired) for that user. */
  abstract isSessionOpen(userId: number, sessionId: string): Promise<boolean>

  /** A user's second factor: set up, required by their policy (`policy`: their own setting). */
  abstract twoFactorOf(user: User): Promise<{
    enrolled: boolean
    required: boolean
    policy: string | null
    recoveryCodesLeft: number
  }>

  /** A signed-in user's own enrolment: a secret (and its otpauth URI) waiting for a first code. */
  abstract startEnrolment(user: User): Promise<{ token: string; secret: string; uri: string }>

  /** Confirms an enrolment with a first code; answers the ten recovery codes, once. */
  abstract confirmEnrolment(user: User, token: string, code: string): Promise<string[]>

  /** Ten new recovery codes (the old ones stop working); null without a second factor. */
  abstract regenerateRecoveryCodes(user: User): Promise<string[] | null>

  /** Password sign-in on api.php off or on; false when it may not be turned off (no second factor). */
  abstract setApiPasswordDisabled(user: User, disabled: boolean): Promise<boolean>

  /** Forgets a user's second factor (they enrol again). */
  abstract resetTwoFactor(user: User, by?: AuditActor): Promise<void>

  /** A user's own requirement: `required`, `optional`, or null for the default policy. */
  abstract setTwoFactorPolicy(
    user: User,
    policy: 'required' | 'optional' | null,
    by?: AuditActor
  ): Promise<void>

  /** A user's open sessions, searched and paged on the server. */
  abstract sessionsOf(userId: number, request: PageRequest): Promise<Paged<SignedInSession>>

  /** Ends one of a user's sessions. */
  abstract endSession(
    userId: number,
    sessionId: string,
    reason: string,
    by?: AuditActor
  ): Promise<void>

  /** Ends every session of a user (the account was disabled). */
  abstract endAllSessions(userId: number, reason: string): Promise<void>
}
