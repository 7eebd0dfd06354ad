/** Why an inbound mail was refused: the code logged and answered by the webhook. */
export type MailRefusalCode =
  | 'MAIL_TOO_LARGE'
  | 'MAIL_UNPARSABLE'
  | 'MAIL_UNKNOWN_RECIPIENT'
  | 'MAIL_AMBIGUOUS_ADDRESS'
  | 'MAIL_NOT_FOUND'
  | 'MAIL_FORBIDDEN'
  | 'MAIL_ATTACHMENT_REFUSED'
  | 'MAIL_AUTOMATIC'
  | 'MAIL_RATE_LIMITED'

/** Each code's SMTP reply (code and enhanced status) and HTTP status. */
const ANSWERS: Record<MailRefusalCode, { smtp: number; enhanced: string; http: number }> = {
  MAIL_TOO_LARGE: { smtp: 552, enhanced: '5.3.4', http: 413 },
  MAIL_UNPARSABLE: { smtp: 554, enhanced: '5.6.0', http: 400 },
  MAIL_UNKNOWN_RECIPIENT: { smtp: 550, enhanced: '5.1.1', http: 404 },
  MAIL_AMBIGUOUS_ADDRESS: { smtp: 550, enhanced: '5.1.1', http: 409 },
  MAIL_NOT_FOUND: { smtp: 550, enhanced: '5.1.1', http: 404 },
  MAIL_FORBIDDEN: { smtp: 550, enhanced: '5.7.1', http: 403 },
  MAIL_ATTACHMENT_REFUSED: { smtp: 554, enhanced: '5.6.0', http: 422 },
  MAIL_AUTOMATIC: { smtp: 550, enhanced: '5.7.1', http: 422 },
  // Temporary: the sender's server tries again later.
  MAIL_RATE_LIMITED: { smtp: 450, enhanced: '4.7.1', http: 429 },
}

/**
 * An inbound mail Quire does not store. `message` is what the sender's
 * server (SMTP reply), the relay (JSON) or the operator (mail:ingest) reads;
 * `detail` is logged for the console and may say more (which of unknown
 * book, unknown sender or non-member it was: the sender is not told).
 */
export class MailRefusal extends Error {
  constructor(
    readonly code: MailRefusalCode,
    message: string,
    readonly detail: string = message,
    /** Seconds until a rate-limited sender may send again. */
    readonly retryAfter?: number
  ) {
    super(message)
  }

  get smtpCode() {
    return ANSWERS[this.code].smtp
  }

  /** The SMTP reply text, enhanced status code first (RFC 3463). */
  get smtpText() {
    return `${ANSWERS[this.code].enhanced} ${this.message}`
  }

  get httpStatus() {
    return ANSWERS[this.code].http
  }
}
