import env from '#start/env'
import settings from '#core/settings/main'
import { parseRanges } from './lib/address_guard.js'

/** Settings of the webhooks plugin (env variables listed in README.md). */
const webhooksConfig = {
  /** One attempt's limit, connection to the end of the answer (setting webhooks.timeoutMs). */
  get timeoutMs() {
    return settings.integer('webhooks.timeoutMs')
  },
  /**
   * Ranges a webhook may reach although they are not public unicast
   * (`10.0.0.0/8,fd00::/8`); empty by default. Tests allow loopback here.
   */
  allowedRanges: parseRanges(env.get('WEBHOOKS_ALLOWED_RANGES', '')),
  /** Deliveries that failed for good, in a row, before the subscription is disabled (setting). */
  get disableAfterFailures() {
    return settings.integer('webhooks.disableAfterFailures')
  },
  /**
   * api.php's bypassUrlTrigger when a write sends none: true (the live
   * product: nothing fires unless `bypassUrlTrigger=false`); false makes
   * every api.php write fire unless it sends `bypassUrlTrigger=true`.
   */
  apiDefaultBypass: env.get('WEBHOOKS_API_DEFAULT_BYPASS', true),
  /** Bytes of an answer read (the rest is dropped) and kept in the log. */
  maxResponseBytes: 64 * 1024,
  excerptBytes: 1024,
  /** A rotated-out secret still signs (second signature) this long. */
  rotationOverlapMs: 24 * 3600_000,
  /** Subscriptions of another instance are noticed within this delay (SubscriptionIndex). */
  indexTtlMs: 2000,
  maxPerTarget: 20,
}

export default webhooksConfig
