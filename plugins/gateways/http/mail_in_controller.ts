import { createHash, timingSafeEqual } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'
import app from '@adonisjs/core/services/app'
import gatewaysConfig from '../config.js'
import { bearerOf } from '../services/android_device_service.js'
import { MailInService } from '../services/mail_in/mail_in_service.js'
import { MailRefusal } from '../services/mail_in/mail_refusal.js'

const digest = (secret: string) => createHash('sha256').update(secret).digest()

/** Whether the request carries the webhook's token (compared in constant time); never when unset. */
function authorized(header: string | undefined) {
  const expected = gatewaysConfig.mailIn.inboundToken
  if (!expected) return false
  return timingSafeEqual(digest(bearerOf(header)), digest(expected))
}

/**
 * A relay's inbound webhook: `POST /gateways/mail/inbound` with the raw
 * message (RFC 5322, any Content-Type) as the body, `Authorization: Bearer
 * <GATEWAYS_MAIL_INBOUND_TOKEN>`, and optionally `?recipient=` (the
 * envelope recipient). The body is read as a stream, never parsed by the
 * body parser: MailInService enforces the size limit.
 */
export default class MailInController {
  async inbound({ request, response }: HttpContext) {
    if (!authorized(request.header('authorization'))) {
      request.request.resume()
      return response
        .status(401)
        .json({ error: 'MAIL_UNAUTHORIZED', message: 'A valid bearer token is required' })
    }
    const mail = await app.container.make(MailInService)
    const recipient = request.qs().recipient
    try {
      const stored = await mail.ingest(request.request, {
        source: 'http',
        recipient: typeof recipient === 'string' ? recipient : undefined,
      })
      return response.json({ status: stored.outcome, smid: stored.smid, ...stored.book })
    } catch (error) {
      if (!(error instanceof MailRefusal)) throw error
      if (error.retryAfter) response.header('Retry-After', String(error.retryAfter))
      return response.status(error.httpStatus).json({ error: error.code, message: error.message })
    }
  }
}
