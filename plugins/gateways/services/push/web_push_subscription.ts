import { ECDH } from 'node:crypto'

/** A browser's PushSubscription as `updatePushId` stores it (its toJSON() less expirationTime). */
export interface WebPushSubscription {
  endpoint: string
  keys: { p256dh: string; auth: string }
}

/** Where Quire may post Web Push requests (settings: GATEWAYS_WEBPUSH_*). */
export interface EndpointRules {
  /** Plain http endpoints (tests' local push service); production requires https. */
  allowHttp: boolean
  /** Push services' host names; an endpoint's host must be one or a subdomain of one. */
  hosts: string[]
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

const decoded = (value: unknown) =>
  typeof value === 'string' && BASE64URL.test(value) ? Buffer.from(value, 'base64url') : null

/**
 * Why Quire will not post to this endpoint, or null. The endpoint comes from
 * a browser (any user's input): only the configured push services' hosts
 * are reached, so it cannot aim Quire's requests at another server.
 */
export function endpointRefusal(endpoint: string, rules: EndpointRules): string | null {
  if (!URL.canParse(endpoint)) return 'the endpoint is not a URL'
  const url = new URL(endpoint)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp))
    return 'the endpoint must be an https URL'
  if (url.username || url.password) return 'the endpoint must carry no credentials'
  const host = url.hostname.toLowerCase()
  if (!rules.hosts.some((allowed) => host === allowed || host.endsWith(`.${allowed}`)))
    return `the endpoint's host is not a known push service (${rules.hosts.join(', ')})`
  return null
}

/**
 * A subscription's JSON checked (endpoint per the rules; p256dh a P-256
 * public key, auth 16 bytes, both base64url) and answered in its stored
 * form, or the reason it is refused.
 */
export function parseSubscription(
  raw: string,
  rules: EndpointRules
): { subscription: WebPushSubscription } | { refusal: string } {
  let value: any
  try {
    value = JSON.parse(raw)
  } catch {
    return { refusal: 'a Web Push subscription is JSON {endpoint, keys: {p256dh, auth}}' }
  }
  if (typeof value?.endpoint !== 'string' || typeof value.keys !== 'object' || !value.keys)
    return { refusal: 'a Web Push subscription is JSON {endpoint, keys: {p256dh, auth}}' }
  const why = endpointRefusal(value.endpoint, rules)
  if (why) return { refusal: why }
  const p256dh = decoded(value.keys.p256dh)
  try {
    // Throws unless it is a point of the curve (uncompressed, 65 bytes).
    if (!p256dh || p256dh.length !== 65) throw new Error('length')
    ECDH.convertKey(p256dh, 'prime256v1')
  } catch {
    return { refusal: 'keys.p256dh must be a P-256 public key (65 bytes, base64url)' }
  }
  const auth = decoded(value.keys.auth)
  if (!auth || auth.length !== 16) return { refusal: 'keys.auth must be 16 bytes (base64url)' }
  return {
    subscription: {
      endpoint: value.endpoint,
      keys: { p256dh: value.keys.p256dh, auth: value.keys.auth },
    },
  }
}
