import http2 from 'node:http2'
import { SignJWT, importPKCS8, type CryptoKey } from 'jose'

/** Apple accepts a provider token for an hour and refuses renewals more often than every 20 min. */
const TOKEN_LIFETIME_MS = 40 * 60_000

export interface ApnsSettings {
  /** The .p8 key's PEM text. */
  key: string
  keyId: string
  teamId: string
  topic: string
  baseUrl: string
  timeoutMs: number
}

export interface ApnsRequest {
  deviceToken: string
  /** apns-collapse-id: notifications with the same id replace each other on the device. */
  collapseId: string
  payload: Record<string, unknown>
}

export interface ApnsAnswer {
  status: number | null
  /** APNs' `reason` (`Unregistered`, `BadDeviceToken`, ...) or the transport's error. */
  reason: string | null
  response: string | null
}

/**
 * APNs over HTTP/2 with token authentication: one ES256 provider token
 * (iss = team id, kid = key id) reused for 40 minutes, one HTTP/2 session
 * reused for every request and opened again when it closes. A base URL in
 * http: speaks cleartext HTTP/2 (tests' local fake); Apple's is https:.
 */
export class ApnsClient {
  private key: Promise<CryptoKey> | null = null
  private token: { value: string; until: number } | null = null
  private session: http2.ClientHttp2Session | null = null

  constructor(readonly settings: ApnsSettings) {}

  async providerToken(): Promise<string> {
    if (this.token && this.token.until > Date.now()) return this.token.value
    this.key ??= importPKCS8(this.settings.key, 'ES256')
    const value = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.settings.keyId })
      .setIssuer(this.settings.teamId)
      .setIssuedAt()
      .sign(await this.key)
    this.token = { value, until: Date.now() + TOKEN_LIFETIME_MS }
    return value
  }

  /** APNs answered ExpiredProviderToken / InvalidProviderToken: make a new one next time. */
  dropToken() {
    this.token = null
  }

  private connect(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session
    const session = http2.connect(this.settings.baseUrl)
    session.on('error', () => session.destroy())
    session.on('close', () => {
      if (this.session === session) this.session = null
    })
    // An idle connection must not keep the process alive.
    session.unref()
    this.session = session
    return session
  }

  async send(request: ApnsRequest): Promise<ApnsAnswer> {
    const token = await this.providerToken()
    const body = JSON.stringify(request.payload)
    return new Promise((resolve) => {
      let settled = false
      const finish = (answer: ApnsAnswer) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(answer)
      }
      let stream: http2.ClientHttp2Stream
      try {
        stream = this.connect().request({
          ':method': 'POST',
          ':path': `/3/device/${request.deviceToken}`,
          'authorization': `bearer ${token}`,
          'apns-topic': this.settings.topic,
          'apns-push-type': 'alert',
          'apns-priority': '10',
          'apns-collapse-id': request.collapseId,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        })
      } catch (error) {
        this.session?.destroy()
        return finish({ status: null, reason: (error as Error).message, response: null })
      }
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL)
        finish({
          status: null,
          reason: `timeout after ${this.settings.timeoutMs} ms`,
          response: null,
        })
      }, this.settings.timeoutMs)
      let status: number | null = null
      const chunks: Buffer[] = []
      stream.on('response', (headers) => (status = Number(headers[':status'])))
      stream.on('data', (chunk: Buffer) => chunks.length < 16 && chunks.push(chunk))
      stream.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8').slice(0, 1024)
        let reason: string | null = null
        try {
          reason = text ? (JSON.parse(text).reason ?? null) : null
        } catch {}
        finish({ status, reason, response: text || null })
      })
      stream.on('error', (error) => finish({ status, reason: error.message, response: null }))
      stream.end(body)
    })
  }

  close() {
    this.session?.close()
    this.session = null
  }
}
