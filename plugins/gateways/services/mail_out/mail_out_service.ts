import { createHash } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import emitter from '@adonisjs/core/services/emitter'
import { Mailer } from '@adonisjs/mail'
import { SMTPTransport } from '@adonisjs/mail/transports/smtp'
import type { EmitterLike } from '@adonisjs/core/types/events'
import type { MailEvents, SMTPConfig } from '@adonisjs/mail/types'
import type { AttemptResult, OutboxChannel, OutboxDelivery, OutboxEntry } from '#core/outbox/types'
import gatewaysConfig from '../../config.js'

/**
 * nodemailer's connections to the relay, opened here with Nagle's algorithm off (TCP_NODELAY):
 * with it on, the end of each message's DATA waited for the relay's delayed ACK of the body, about
 * 40 ms a mail on a kept-open connection (measured against smtp-server on loopback: 44 ms a mail,
 * 1-2 ms without). nodemailer then speaks SMTP on it as on its own: STARTTLS, or TLS from the
 * first byte when `secure`, upgrades it.
 */
function connectWithoutDelay(timeoutMs: number) {
  return (
    options: { host: string; port: number },
    callback: (error: Error | null, socket?: { connection: Socket }) => void
  ) => {
    const socket = connect({ host: options.host, port: options.port, noDelay: true })
    const timer = setTimeout(
      () => socket.destroy(new Error(`connection to ${options.host}:${options.port} timed out`)),
      timeoutMs
    )
    const failed = (error: Error) => {
      clearTimeout(timer)
      callback(error)
    }
    socket.once('error', failed)
    socket.once('connect', () => {
      clearTimeout(timer)
      socket.removeListener('error', failed)
      callback(null, { connection: socket })
    })
  }
}

/** The outbox channel of e-mail. */
export const MAIL_CHANNEL = 'mail'

/** One e-mail to write to the outbox. */
export interface OutgoingMail {
  to: string
  subject: string
  text: string
  html?: string
  replyTo?: string
  headers?: Record<string, string>
  /** Unique per mail: the same key twice is sent once (it also makes the Message-ID). */
  idempotencyKey: string
  /** For the log and the console (`message.copy`, `reminder`, `invitation`). */
  eventType: string
  /** Not sent before this time (epoch ms). */
  notBefore?: number
}

/** What a mail delivery's row carries. */
type MailPayload = Omit<OutgoingMail, 'idempotencyKey' | 'eventType' | 'notBefore'>

/**
 * A 5xx reply to the recipient or to the mail itself will not change on a
 * retry (no such mailbox, refused content). A 5xx elsewhere (AUTH, MAIL
 * FROM) is Quire's settings, which may be fixed: retried like a 4xx.
 */
const isPermanent = (code: number, command: string) =>
  code >= 500 && code < 600 && (command === 'RCPT TO' || command === 'DATA')

/**
 * E-mail out (issue 19 item 6): the outbox channel `mail`, sending over SMTP
 * with @adonisjs/mail's SMTP transport (nodemailer). Callers build entries
 * with `entry()` and write them with `OutboxService.enqueue` in their own
 * transaction; nothing is written while SMTP is not configured (`enabled`).
 */
export class MailOutService {
  private mailer: Mailer<SMTPTransport> | null = null
  private mailerOf: string | null = null

  /** Whether SMTP is configured: callers write no mail entries otherwise. */
  get enabled() {
    return Boolean(gatewaysConfig.smtp.host && gatewaysConfig.smtp.from)
  }

  /** An outbox entry of the `mail` channel (the recipient is the address). */
  entry(mail: OutgoingMail): OutboxEntry {
    const payload: MailPayload = {
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      ...(mail.html === undefined ? {} : { html: mail.html }),
      ...(mail.replyTo === undefined ? {} : { replyTo: mail.replyTo }),
      ...(mail.headers === undefined ? {} : { headers: mail.headers }),
    }
    return {
      channel: MAIL_CHANNEL,
      recipient: mail.to.toLowerCase(),
      idempotencyKey: mail.idempotencyKey,
      eventType: mail.eventType,
      payload,
      ...(mail.notBefore === undefined ? {} : { notBefore: mail.notBefore }),
    }
  }

  /** The `mail` outbox channel. */
  channel(): OutboxChannel {
    return { send: (delivery) => this.send(delivery) }
  }

  private async send(delivery: OutboxDelivery): Promise<AttemptResult> {
    const mailer = this.currentMailer()
    if (!mailer) return { outcome: 'retry', error: 'SMTP is not configured' }
    const payload = delivery.payload as MailPayload
    try {
      const response = await mailer.send((message) => {
        message
          .to(payload.to)
          .from(gatewaysConfig.smtp.from!)
          .subject(payload.subject)
          .text(payload.text)
          // The same on every attempt: a receiver that got it already can drop a repeat.
          .messageId(messageIdOf(delivery.idempotencyKey, gatewaysConfig.smtp.from!))
        if (payload.html !== undefined) message.html(payload.html)
        if (payload.replyTo !== undefined) message.replyTo(payload.replyTo)
        for (const [name, value] of Object.entries(payload.headers ?? {}))
          message.header(name, value)
      })
      return { outcome: 'delivered', status: 250, response: String(response.original.response) }
    } catch (error) {
      const smtp = error as {
        responseCode?: number
        response?: string
        message?: string
        command?: string
      }
      const code = typeof smtp.responseCode === 'number' ? smtp.responseCode : null
      return {
        outcome: code !== null && isPermanent(code, smtp.command ?? '') ? 'failed' : 'retry',
        status: code,
        response: smtp.response ?? null,
        error: smtp.message ?? String(error),
      }
    }
  }

  /** The SMTP mailer of the current settings (tests change them); null when not configured. */
  private currentMailer() {
    if (!this.enabled) return null
    const { host, port, secure, user, password, timeoutMs, connections } = gatewaysConfig.smtp
    const settings = JSON.stringify([host, port, secure, user, password, timeoutMs, connections])
    if (this.mailer && this.mailerOf === settings) return this.mailer
    void this.mailer?.close()
    const config = {
      host: host!,
      port,
      secure,
      ...(user ? { auth: { type: 'login' as const, user, pass: password ?? '' } } : {}),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      // Connections kept open, mail after mail on each (nodemailer's pool; a relay that closes
      // one after some mails, or an idle one, is reconnected).
      pool: true,
      maxConnections: Math.max(1, connections),
      maxMessages: Infinity,
      getSocket: connectWithoutDelay(timeoutMs),
    }
    // The app's emitter: mail:sending / mail:sent reach any listener (events the app does not declare).
    const events = emitter as unknown as EmitterLike<MailEvents>
    this.mailer = new Mailer('gateways', new SMTPTransport(config as SMTPConfig), events)
    this.mailerOf = settings
    return this.mailer
  }

  /** Closes the SMTP connection (shutdown). */
  async close() {
    await this.mailer?.close()
    this.mailer = null
    this.mailerOf = null
  }
}

/** A Message-ID made from the delivery's key, on the From's domain. */
function messageIdOf(key: string, from: string) {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'quire.local'
  return `<${createHash('sha256').update(key).digest('hex').slice(0, 32)}@${domain}>`
}
