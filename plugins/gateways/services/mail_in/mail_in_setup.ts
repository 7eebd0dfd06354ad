import type { ApplicationService } from '@adonisjs/core/types'
import logger from '@adonisjs/core/services/logger'
import gatewaysConfig from '../../config.js'
import { MailInLimits } from './mail_in_limits.js'
import { MailInService } from './mail_in_service.js'
import { SmtpListener } from './smtp_listener.js'

/** E-mail in's part of the gateways provider: its bindings, and the SMTP listener's life. */
export class MailInSetup {
  private listener: SmtpListener | null = null

  constructor(private app: ApplicationService) {}

  register() {
    this.app.container.singleton(
      MailInLimits,
      async (resolver) =>
        new MailInLimits(await resolver.make('limiter.manager'), {
          perSender: gatewaysConfig.mailIn.ratePerSender,
          window: gatewaysConfig.rateWindow,
        })
    )
  }

  /**
   * Starts the listener in the web server's process when
   * GATEWAYS_SMTP_LISTEN_PORT is set (not in ace commands, queue:work or
   * tests: one process owns the port).
   */
  async start() {
    const port = gatewaysConfig.mailIn.smtpPort
    if (port === undefined || this.app.getEnvironment() !== 'web') return
    this.listener = new SmtpListener(await this.app.container.make(MailInService))
    const host = gatewaysConfig.mailIn.smtpHost
    const bound = await this.listener.start({ port, host })
    logger.info(`inbound SMTP listening on ${host}:${bound}`)
  }

  async stop() {
    await this.listener?.stop()
    this.listener = null
  }
}
