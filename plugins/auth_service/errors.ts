/**
 * The auth service's error bodies: `{ success: false, error, message }` plus
 * extras (retry_after, errors). The `error` values and their HTTP statuses are
 * listed in README.md; this table is the one place they are defined.
 */
export const AUTH_ERRORS = {
  validation_error: {
    status: 422,
    summary: 'the body is missing fields or has malformed ones; see `errors`',
  },
  invalid_json: { status: 400, summary: 'the body is not valid JSON or urlencoded data' },
  unauthorized: {
    status: 401,
    summary:
      'no bearer token, or the token is malformed, expired, signed with an unknown key, or its session was revoked',
  },
  invalid_credentials: { status: 401, summary: 'login and password do not match an account' },
  invalid_code: {
    status: 401,
    summary: 'the TOTP code is wrong, outside its time window, or was already used',
  },
  invalid_setup_token: {
    status: 400,
    summary:
      'the setup_token (or login_token, password_reset_token) is unknown, already used, or burnt by too many wrong codes',
  },
  setup_token_expired: {
    status: 400,
    summary: 'the setup_token (or login_token, password_reset_token) has expired',
  },
  authorization_request_expired: {
    status: 400,
    summary: 'the OIDC authorization request behind this login has expired or was already used',
  },
  user_not_found: { status: 410, summary: 'the token points to a user that no longer exists' },
  invalid_refresh_token: {
    status: 401,
    summary: 'the refresh token is unknown, expired, or its session was revoked',
  },
  refresh_token_reused: {
    status: 401,
    summary:
      'an already used refresh token was presented: the whole session (its chain) is revoked',
  },
  invalid_client: { status: 400, summary: 'client_id names no registered client' },
  invalid_redirect_uri: { status: 400, summary: 'redirect_uri is not registered for this client' },
  invalid_request: {
    status: 400,
    summary: 'the authorization request is malformed (e.g. unknown response_mode)',
  },
  unknown_request: { status: 400, summary: 'request_id names no authorization request' },
  too_many_requests: {
    status: 429,
    summary: 'rate limit exceeded; `retry_after` gives the seconds to wait',
  },
  not_found: { status: 404, summary: 'no such route under {auth_url}' },
  internal_error: { status: 500, summary: 'unexpected server error (logged)' },
} as const

export type AuthErrorCode = keyof typeof AUTH_ERRORS

export class AuthError extends Error {
  constructor(
    readonly code: AuthErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {}
  ) {
    super(message)
  }

  get status(): number {
    return AUTH_ERRORS[this.code].status
  }

  toBody() {
    return { success: false, error: this.code, message: this.message, ...this.extra }
  }

  /** Self-handled by AdonisJS's exception handler if one ever escapes the auth routes' own handling. */
  handle(
    error: AuthError,
    ctx: { response: { status(code: number): unknown; json(body: unknown): unknown } }
  ) {
    ctx.response.status(error.status)
    ctx.response.json(error.toBody())
  }
}

export const authError = (code: AuthErrorCode, message: string, extra?: Record<string, unknown>) =>
  new AuthError(code, message, extra)
