import type { AddressInfo } from 'node:net'
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server'
import logger from '@adonisjs/core/services/logger'
import gatewaysConfig from '../../config.js'
import { isAtMailDomain } from './mail_address.js'
import type { MailInService } from './mail_in_service.js'
import { MailRefusal } from './mail_refusal.js'

/** An SMTP reply smtp-server sends for a callback's error. */
function reply(code: number, text: string) {
  return Object.assign(new Error(text), { responseCode: code })
}

/**
 * Quire's own inbound SMTP listener (smtp-server): the MX of MAIL_DOMAIN,
 * or the next hop of a relay. No AUTH: anyone may deliver, as to any MX;
 * what is stored is decided per message by MailInService. SIZE is
 * advertised and enforced: smtp-server refuses a MAIL FROM announcing more
 * (552), MailInService a longer DATA (552 after it). One book recipient per transaction:
 * a second RCPT TO answers 452, which tells the client to send it again in
 * its own transaction (RFC 5321 3.3), so each book gets its own answer.
 */
export class SmtpListener {
  private server: SMTPServer | null = null

  constructor(private mail: MailInService) {}

  /** Starts listening; answers the port (0 asks the system for a free one). */
  async start(options: { port: number; host: string }): Promise<number> {
    const max = gatewaysConfig.mailIn.maxBytes
    const server = new SMTPServer({
      name: gatewaysConfig.mailIn.domain,
      banner: 'Quire mail in',
      size: max,
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      // No reverse DNS of each client: nothing the decision uses, and no lookup traffic per connection.
      disableReverseLookup: true,
      logger: false,
      onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback) {
        if (!isAtMailDomain(address.address)) {
          return callback(reply(550, `5.1.1 ${address.address}: not a book address here`))
        }
        if (session.envelope.rcptTo.length > 0) {
          return callback(reply(452, '4.5.3 One book per message: send again for this recipient'))
        }
        callback()
      },
      onData: (stream, session, callback) => {
        const recipient = session.envelope.rcptTo[0]?.address
        this.mail
          .ingest(stream, { source: 'smtp', recipient })
          .then((stored) =>
            callback(null, `2.0.0 Stored in ${stored.book.b_c} (${stored.outcome})`)
          )
          .catch((error) => {
            if (error instanceof MailRefusal) {
              return callback(reply(error.smtpCode, error.smtpText))
            }
            logger.error({ err: error }, 'inbound mail: failed')
            callback(reply(451, '4.3.0 Temporary failure: try again later'))
          })
      },
    })
    server.on('error', (error) => logger.error({ err: error }, 'inbound SMTP listener'))
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject)
      server.listen(options.port, options.host, () => {
        server.server.off('error', reject)
        resolve()
      })
    })
    this.server = server
    return (server.server.address() as AddressInfo).port
  }

  /** Stops accepting connections and waits for those open to end. */
  async stop() {
    const server = this.server
    this.server = null
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
