import http from 'node:http'
import https from 'node:https'
import type dns from 'node:dns'
import ipaddr from 'ipaddr.js'
import type { AttemptResult, OutboxChannel, OutboxDelivery } from '#core/outbox/types'
import webhooksConfig from '../config.js'
import { AddressRefused, guardedLookup, refusal, type Cidr } from '../lib/address_guard.js'
import { signatureHeader } from '../lib/signature.js'
import type { WebhookRow, WebhookService } from './webhook_service.js'

export interface PostOptions {
  timeoutMs: number
  allowed: Cidr[]
  maxResponseBytes: number
  excerptBytes: number
  /** Replaces DNS (tests: a name that answers 127.0.0.1). */
  resolve?: typeof dns.lookup
}

export interface PostResult {
  status: number | null
  response: string | null
  error: string | null
  refused: boolean
}

/**
 * Connections are kept for the next delivery to the same address (a
 * receiver gets thousands a minute). The address check runs when a
 * connection is made (the lookup below), so a kept one was checked.
 */
const keptAlive = {
  http: new http.Agent({ keepAlive: true, maxFreeSockets: 256 }),
  https: new https.Agent({ keepAlive: true, maxFreeSockets: 256 }),
}

/**
 * One POST, SSRF-safe: http(s) only, the connected address checked in the
 * socket's lookup (a literal address before connecting), no redirects
 * followed (a 3xx is an answer like any other), the whole exchange bounded
 * by a timeout, the answer read up to a bound.
 */
export function post(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions
): Promise<PostResult> {
  return new Promise((resolve) => {
    let url: URL
    try {
      url = new URL(target)
    } catch {
      return resolve({ status: null, response: null, error: 'invalid URL', refused: true })
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return resolve({ status: null, response: null, error: 'not http(s)', refused: true })
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (ipaddr.isValid(host)) {
      const why = refusal(host, options.allowed)
      if (why) return resolve({ status: null, response: null, error: why, refused: true })
    }
    const secure = url.protocol === 'https:'
    const client = secure ? https : http
    let settled = false
    const finish = (result: PostResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() },
        lookup: guardedLookup(options.allowed, options.resolve),
        agent: secure ? keptAlive.https : keptAlive.http,
      },
      (response) => {
        const chunks: Buffer[] = []
        let size = 0
        response.on('data', (chunk: Buffer) => {
          if (size >= options.maxResponseBytes) return
          chunks.push(chunk)
          size += chunk.length
          if (size >= options.maxResponseBytes) response.destroy()
        })
        const done = () =>
          finish({
            status: response.statusCode ?? null,
            response: Buffer.concat(chunks).subarray(0, options.excerptBytes).toString('utf8'),
            error: null,
            refused: false,
          })
        response.on('end', done)
        response.on('close', done)
        response.on('error', done)
      }
    )
    const timer = setTimeout(() => {
      request.destroy(new Error(`timeout after ${options.timeoutMs} ms`))
    }, options.timeoutMs)
    request.on('error', (error) =>
      finish({
        status: null,
        response: null,
        error: error.message,
        refused: error instanceof AddressRefused,
      })
    )
    request.end(body)
  })
}

/**
 * The `webhook` outbox channel: signs each attempt per Standard Webhooks
 * (webhook-id = the delivery's idempotency key, the same on every attempt;
 * webhook-timestamp = the attempt's time; webhook-signature with the current
 * secret, plus the previous one during a rotation), posts it, and maps the
 * answer: 2xx delivered, 410 Gone disables the subscription, a refused
 * address fails at once, anything else is retried.
 */
export class WebhookChannel implements OutboxChannel {
  constructor(
    private webhooks: WebhookService,
    private options: Partial<PostOptions> = {}
  ) {}

  /** The subscriptions of a batch of deliveries, read once, with their signing secrets. */
  async prepare(deliveries: OutboxDelivery[]): Promise<Prepared> {
    const ids = [...new Set(deliveries.map((delivery) => subscriptionOf(delivery)))]
    const rows = await this.webhooks.rows(ids)
    return new Map(
      rows.map((row) => [Number(row.id), { row, secrets: this.webhooks.signingSecrets(row) }])
    )
  }

  async send(delivery: OutboxDelivery, prepared?: unknown): Promise<AttemptResult> {
    const id = subscriptionOf(delivery)
    const known =
      prepared instanceof Map
        ? (prepared as Prepared).get(id)
        : await this.webhooks
            .row(id)
            .then((row) => (row ? { row, secrets: this.webhooks.signingSecrets(row) } : undefined))
    if (!known) return { outcome: 'cancelled', error: 'the webhook was deleted' }
    const { row, secrets } = known
    if (!row.active && delivery.eventType !== 'webhook.test')
      return { outcome: 'cancelled', error: 'the webhook is disabled' }
    const body = JSON.stringify(delivery.payload)
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Quire-Webhooks/1',
      'webhook-id': delivery.idempotencyKey,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, delivery.idempotencyKey, timestamp, body),
    }
    const result = await post(row.url, headers, body, {
      timeoutMs: webhooksConfig.timeoutMs,
      allowed: webhooksConfig.allowedRanges,
      maxResponseBytes: webhooksConfig.maxResponseBytes,
      excerptBytes: webhooksConfig.excerptBytes,
      ...this.options,
    })
    const answer = { status: result.status, response: result.response, error: result.error }
    if (result.refused) return { ...answer, outcome: 'failed' }
    if (result.status !== null && result.status >= 200 && result.status < 300) {
      // Only a success after failures resets the count (its hook may run in another process).
      if (Number(row.consecutive_failures) > 0)
        return { ...answer, outcome: 'delivered', note: { afterFailures: true } }
      return { ...answer, outcome: 'delivered' }
    }
    if (result.status === 410) return { ...answer, outcome: 'failed', error: '410 Gone' }
    return { ...answer, outcome: 'retry' }
  }

  async onDelivered(delivery: OutboxDelivery, result: AttemptResult) {
    // A subscription without failures has no count to reset: no write for each delivery.
    if (result.note?.afterFailures !== true) return
    await this.webhooks.noteSuccess(subscriptionOf(delivery))
  }

  async onFailed(delivery: OutboxDelivery, result: AttemptResult) {
    if (delivery.eventType === 'webhook.test') return
    const gone = result.status === 410
    await this.webhooks.noteFailure(
      subscriptionOf(delivery),
      gone
        ? 'the receiver answered 410 Gone'
        : `deliveries failed: ${result.error ?? result.status}`,
      gone
    )
  }
}

type Prepared = Map<number, { row: WebhookRow; secrets: string[] }>

/** A delivery's subscription id (its recipient is `wh:<id>`). */
const subscriptionOf = (delivery: OutboxDelivery) => Number(delivery.recipient.slice(3))
