/** What the console keeps in its (encrypted cookie) session. */
export const SESSION_KEYS = {
  /** The auth-service session the console sign-in opened (its public id). */
  authSession: 'console.sid',
  /** Its refresh token: sign-out revokes the session through it. */
  refreshToken: 'console.rt',
  /** A sign-in waiting for its TOTP code (or enrolment). */
  pending: 'console.pending',
  /** A signed-in administrator's own enrolment (Account page), waiting for its first code. */
  enrolment: 'console.enrolment',
} as const

/** The flash key of recovery codes shown once (after an enrolment or a regeneration). */
export const RECOVERY_CODES_FLASH = 'recoveryCodes'

export interface PendingSignIn {
  kind: 'totp' | 'setup'
  token: string
  login: string
  /** Enrolment only: the new secret and its otpauth URI, shown once. */
  secret?: string
  uri?: string
}
