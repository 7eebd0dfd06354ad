/**
 * The one catalogue of api.php error codes. Every `nok` answer carries one of
 * these as errorCode, a human-readable errorMsg, and an `error` string in the
 * spec's `apiProcess<N>: <reason>` form. docs/errors.md lists them; a unit test
 * keeps that page and this table in agreement.
 */
export const ERROR_CATALOGUE = {
  UNKNOWN_OPERATION: { process: 1, summary: 'req/r names no operation of this server' },
  MISSING_PARAMETER: { process: 2, summary: 'a required parameter is absent or empty' },
  INVALID_PARAMETER: { process: 3, summary: 'a parameter has the wrong type, format or value' },
  INVALID_APPKEY: { process: 10, summary: 'the appkey is unknown or revoked' },
  INVALID_LOGIN: { process: 11, summary: 'login and pwd do not match an account' },
  TOO_MANY_ATTEMPTS: {
    process: 12,
    summary: 'too many failed logins; retry after the delay given',
  },
  ACCOUNT_CREATION_DISABLED: {
    process: 13,
    summary: 'createUserAccount is not enabled on this server',
  },
  PASSWORD_SIGN_IN_DISABLED: {
    process: 14,
    summary:
      'the user turned off password sign-in on api.php; oauthkeys are made in the admin console',
  },
  INVALID_OAUTHKEY: {
    process: 20,
    summary: 'the oauthkey is unknown, revoked, or not the key of o_u',
  },
  INVALID_SESSKEY: { process: 21, summary: 'the sesskey is unknown or was dropped' },
  SESSION_EXPIRED: { process: 22, summary: 'the sesskey expired; create a new one' },
  USER_MISMATCH: { process: 23, summary: 'o_u is not the user of this sesskey' },
  ON_BEHALF_DENIED: {
    process: 24,
    summary: 'u_c differs from o_u and o_u may not act on behalf of u_c',
  },
  UNKNOWN_USER: { process: 25, summary: 'u_c names no user' },
  TOKEN_INVALID: {
    process: 26,
    summary: 'the table token is unknown, or its table, view, row or creator is gone',
  },
  TOKEN_EXPIRED: { process: 27, summary: 'the table token expired; ask for a new one' },
  TOKEN_REVOKED: { process: 28, summary: 'the table token was revoked by an administrator' },
  TOKEN_READONLY: { process: 29, summary: 'the table token is read-only and the operation writes' },
  READONLY_SESSION: { process: 30, summary: 'the session is read-only and the operation writes' },
  RESTRICTED_SESSION: {
    process: 31,
    summary: 'the session is restricted to another book or hides this area',
  },
  FORBIDDEN: { process: 32, summary: 'the user has no right to do this' },
  ENCRYPTED_FIELD_LOCKED: {
    process: 33,
    summary: 'the field is encrypted: writing it needs its password in encryptedFieldPasswords',
  },
  ENCRYPTION_PASSWORD_WRONG: {
    process: 34,
    summary:
      'a password of encryptedFieldPasswords does not unlock its field; nothing was unlocked',
  },
  ENCRYPTED_FIELD_UNSEARCHABLE: {
    process: 35,
    summary: 'the field is encrypted: it cannot be filtered, sorted or grouped on',
  },
  NOT_FOUND: {
    process: 40,
    summary: 'the object named does not exist or is not visible to the user',
  },
  CONFLICT: { process: 41, summary: 'the change conflicts with the current state' },
  PAYLOAD_TOO_LARGE: { process: 50, summary: 'the request body exceeds the configured limit' },
  MALFORMED_FRAME: {
    process: 60,
    summary: 'socket: the frame is not a JSON object with an integer type',
  },
  UNKNOWN_MESSAGE_TYPE: {
    process: 61,
    summary: 'socket: no handler for this message type (or system message msg)',
  },
  RATE_LIMITED: {
    process: 62,
    summary:
      'too many frames (socket: the frame was dropped) or requests (SMS gateways: retryAfter); slow down',
  },
  GATEWAY_PENDING: {
    process: 70,
    summary: 'registerSMSGateway: the number is not allowed yet; recorded for an administrator',
  },
  GATEWAY_UNKNOWN_SENDER: {
    process: 71,
    summary: "an SMS gateway's u_c is the number (mob1 or mob2) of no user, or of several",
  },
  DEADLOCK: { process: 90, summary: 'transient database conflict (Deadlock); retry the request' },
  INTERNAL_ERROR: { process: 99, summary: 'unexpected server error; logged with a reference' },
} as const

export type ErrorCode = keyof typeof ERROR_CATALOGUE

/** Thrown by operations and services; the dispatcher turns it into a `nok` envelope. */
/** Longest errorMsg: a message quoting a client's value never sends a huge value back. */
export const MAX_ERROR_MESSAGE = 500

export class RpcError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {}
  ) {
    super(
      message.length > MAX_ERROR_MESSAGE ? `${message.slice(0, MAX_ERROR_MESSAGE - 1)}…` : message
    )
  }

  get process() {
    return ERROR_CATALOGUE[this.code].process
  }
}

export const rpcError = (code: ErrorCode, message: string, extra?: Record<string, unknown>) =>
  new RpcError(code, message, extra)
