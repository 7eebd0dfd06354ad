import { errors, type Limiter, type LimiterManager } from '@adonisjs/limiter'
import { MailRefusal } from './mail_refusal.js'

/**
 * Inbound mail per sender address, through the kernel's limiter (in memory,
 * or in Redis shared by every instance): past the limit a mail is refused
 * for now (SMTP 450, HTTP 429), and the sender's server tries again later.
 */
export class MailInLimits {
  private perSender: Limiter

  constructor(
    limiter: LimiterManager<any>,
    settings: { perSender: number; window: string | number }
  ) {
    this.perSender = limiter.use({ requests: settings.perSender, duration: settings.window })
  }

  /** One mail from this address (lowercase). */
  async sender(address: string) {
    try {
      await this.perSender.consume(`mail-in-sender:${address}`)
    } catch (error) {
      if (!(error instanceof errors.E_TOO_MANY_REQUESTS)) throw error
      const retryAfter = Math.max(1, error.response.availableIn)
      throw new MailRefusal(
        'MAIL_RATE_LIMITED',
        `Too many messages from ${address}: try again in ${retryAfter} seconds`,
        undefined,
        retryAfter
      )
    }
  }
}
