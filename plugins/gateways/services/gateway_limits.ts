import { errors, type Limiter, type LimiterManager } from '@adonisjs/limiter'
import { rpcError } from '#core/rpc/errors'

const gatewayKey = (phone: string) => `gateway:${phone}`

export interface GatewayLimitSettings {
  ratePerGateway: number
  ratePerSender: number
  rateWindow: string | number
}

/**
 * The gateways' rate limits (the kernel's limiter: in memory, or in Redis
 * shared by every instance): requests per gateway number, and messages per
 * sender number through any gateway, each within one window. Past a limit the
 * request answers RATE_LIMITED with retryAfter and does nothing.
 */
export class GatewayLimits {
  private perGateway: Limiter
  private perSender: Limiter

  constructor(limiter: LimiterManager<any>, settings: GatewayLimitSettings) {
    this.perGateway = limiter.use({
      requests: settings.ratePerGateway,
      duration: settings.rateWindow,
    })
    this.perSender = limiter.use({
      requests: settings.ratePerSender,
      duration: settings.rateWindow,
    })
  }

  /** One request of the gateway with this number (E.164). */
  gateway(phone: string) {
    return this.take(this.perGateway, gatewayKey(phone), `requests from the gateway ${phone}`)
  }

  /** One message of the sender with this number (E.164). */
  sender(phone: string) {
    return this.take(this.perSender, `gateway-sender:${phone}`, `messages from ${phone}`)
  }

  /**
   * Where the gateway with this number stands in its window (the console):
   * requests used of the limit and seconds until the window resets; null
   * when it made none in the current window.
   */
  async gatewayState(phone: string) {
    const response = await this.perGateway.get(gatewayKey(phone))
    if (!response) return null
    return {
      used: response.consumed,
      limit: response.limit,
      resetsIn: Math.max(0, response.availableIn),
    }
  }

  private async take(limiter: Limiter, key: string, what: string) {
    try {
      await limiter.consume(key)
    } catch (error) {
      if (!(error instanceof errors.E_TOO_MANY_REQUESTS)) throw error
      const retryAfter = Math.max(1, error.response.availableIn)
      throw rpcError('RATE_LIMITED', `Too many ${what}: retry in ${retryAfter} seconds`, {
        retryAfter,
      })
    }
  }
}
