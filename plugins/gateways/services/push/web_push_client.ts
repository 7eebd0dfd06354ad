import { createHash } from 'node:crypto'
import webpush from 'web-push'
import { endpointRefusal, parseSubscription, type EndpointRules } from './web_push_subscription.js'

export interface WebPushSettings extends EndpointRules {
  /** The VAPID key pair (base64url, as `web-push generate-vapid-keys` prints it). */
  publicKey: string
  privateKey: string
  /** The VAPID contact: a mailto: or https: URL. */
  subject: string
  ttlSeconds: number
  timeoutMs: number
}

export interface WebPushAnswer {
  status: number | null
  response: string | null
  error: string | null
  /** Quire refused to send it (the stored subscription breaks the rules): final. */
  refused: boolean
}

const EXCERPT_BYTES = 1024

/** RFC 8030 §5.4: a topic is at most 32 base64url characters; a longer key is hashed to one. */
const topicOf = (key: string) =>
  /^[A-Za-z0-9_-]{1,32}$/.test(key)
    ? key
    : createHash('sha256').update(key).digest('base64url').slice(0, 32)

/**
 * Web Push (RFC 8030) with VAPID (RFC 8292) and an aes128gcm payload
 * (RFC 8291): the `web-push` library encrypts and signs; the request goes
 * out with fetch, which keeps the time limit and lets tests use an http
 * endpoint on loopback (web-push's own sender speaks https only).
 */
export class WebPushClient {
  constructor(readonly settings: WebPushSettings) {}

  async send(stored: string, message: { topic: string; body: string }): Promise<WebPushAnswer> {
    const parsed = parseSubscription(stored, this.settings)
    if ('refusal' in parsed)
      return { status: null, response: null, error: parsed.refusal, refused: true }
    const { subscription } = parsed
    // Checked again at send time: the rules may have changed since the device registered.
    const why = endpointRefusal(subscription.endpoint, this.settings)
    if (why) return { status: null, response: null, error: why, refused: true }
    let details: webpush.RequestDetails
    try {
      details = webpush.generateRequestDetails(subscription, message.body, {
        vapidDetails: {
          subject: this.settings.subject,
          publicKey: this.settings.publicKey,
          privateKey: this.settings.privateKey,
        },
        TTL: this.settings.ttlSeconds,
        topic: topicOf(message.topic),
        urgency: 'high',
        contentEncoding: 'aes128gcm',
      })
    } catch (error) {
      // A VAPID setting web-push refuses: retried, so that a fixed setting still sends it.
      return { status: null, response: null, error: (error as Error).message, refused: false }
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(details.headers))
      if (name.toLowerCase() !== 'content-length') headers[name] = String(value)
    try {
      const response = await fetch(details.endpoint, {
        method: 'POST',
        headers,
        body: details.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      })
      const text = Buffer.from(await response.arrayBuffer())
        .subarray(0, EXCERPT_BYTES)
        .toString('utf8')
      return { status: response.status, response: text || null, error: null, refused: false }
    } catch (error) {
      return { status: null, response: null, error: (error as Error).message, refused: false }
    }
  }
}
