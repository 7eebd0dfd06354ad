import { SignJWT, importPKCS8, type CryptoKey } from 'jose'
import type { ServiceAccount } from './credentials.js'

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token'
/** An access token is renewed this long before Google says it expires. */
const EARLY_RENEWAL_MS = 60_000

export interface FcmSettings {
  account: ServiceAccount
  projectId: string
  baseUrl: string
  tokenUrl?: string
  timeoutMs: number
}

/** One send's outcome in FCM's terms (the channel maps it to the outbox's). */
export interface FcmAnswer {
  status: number | null
  /** FCM's error code (`UNREGISTERED`, `INVALID_ARGUMENT`, ...) or the transport's error. */
  code: string | null
  response: string | null
}

/**
 * FCM HTTP v1 with a service account: an OAuth access token obtained with a
 * JWT assertion signed by the account's RSA key (RFC 7523; what
 * google-auth-library does, without its dependency tree), cached until
 * shortly before it expires, then `POST /v1/projects/<id>/messages:send`.
 */
export class FcmClient {
  private key: Promise<CryptoKey> | null = null
  private token: { value: string; until: number } | null = null
  private pending: Promise<string> | null = null

  constructor(readonly settings: FcmSettings) {}

  get tokenUrl() {
    return this.settings.tokenUrl ?? this.settings.account.token_uri ?? GOOGLE_TOKEN_URL
  }

  /** The cached access token, or a new one (one request at a time). */
  async accessToken(): Promise<string> {
    if (this.token && this.token.until > Date.now()) return this.token.value
    this.pending ??= this.fetchToken().finally(() => (this.pending = null))
    return this.pending
  }

  /** Forgets the access token (FCM answered 401: it was revoked or expired early). */
  dropToken() {
    this.token = null
  }

  private async fetchToken(): Promise<string> {
    const { account } = this.settings
    this.key ??= importPKCS8(account.private_key, 'RS256')
    const now = Math.floor(Date.now() / 1000)
    const assertion = await new SignJWT({ scope: SCOPE })
      .setProtectedHeader({
        alg: 'RS256',
        typ: 'JWT',
        ...(account.private_key_id ? { kid: account.private_key_id } : {}),
      })
      .setIssuer(account.client_email)
      .setAudience(this.tokenUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await this.key)
    const response = await fetch(this.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion,
      }).toString(),
      signal: AbortSignal.timeout(this.settings.timeoutMs),
    })
    const text = await response.text()
    if (!response.ok)
      throw new Error(`FCM token endpoint answered ${response.status}: ${text.slice(0, 200)}`)
    const body = JSON.parse(text) as { access_token?: string; expires_in?: number }
    if (!body.access_token) throw new Error('FCM token endpoint answered no access_token')
    const lifetimeMs = Number(body.expires_in ?? 3600) * 1000
    this.token = {
      value: body.access_token,
      until: Date.now() + Math.max(0, lifetimeMs - EARLY_RENEWAL_MS),
    }
    return body.access_token
  }

  /** Sends one message (the v1 `message` object); never throws for an answer, only for no token. */
  async send(message: Record<string, unknown>): Promise<FcmAnswer> {
    const token = await this.accessToken()
    const url = `${this.settings.baseUrl.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(this.settings.projectId)}/messages:send`
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'authorization': `Bearer ${token}`,
          'content-type': 'application/json; charset=UTF-8',
        },
        body: JSON.stringify({ message }),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      })
      const full = await response.text()
      const text = full.slice(0, 2048)
      return {
        status: response.status,
        code: response.ok ? null : fcmErrorCode(text),
        response: text,
      }
    } catch (error) {
      return {
        status: null,
        code: error instanceof Error ? error.message : String(error),
        response: null,
      }
    }
  }
}

/**
 * FCM's error code: `details[].errorCode` of the google.rpc.Status body
 * (`UNREGISTERED`, `SENDER_ID_MISMATCH`, ...), else its `status`.
 */
export function fcmErrorCode(text: string): string | null {
  try {
    const error = JSON.parse(text)?.error
    const detail = Array.isArray(error?.details)
      ? error.details.find((entry: any) => typeof entry?.errorCode === 'string')
      : null
    return detail?.errorCode ?? error?.status ?? null
  } catch {
    return null
  }
}
