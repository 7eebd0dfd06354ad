import { flags } from '@adonisjs/core/ace'
import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Stores one e-mail read from standard input into its book, as the SMTP
 * listener and the relay webhook do: `node ace mail:ingest < message.eml`
 * (a local MTA's pipe transport, a replay of a saved message). Exits 1 when
 * the mail is refused, saying why.
 */
export default class MailIngest extends BaseCommand {
  static commandName = 'mail:ingest'
  static description =
    'Store an e-mail read from standard input into the book its recipient names (<b_c>.<b_o>@MAIL_DOMAIN)'
  static options: CommandOptions = { startApp: true }

  @flags.string({
    description: 'The envelope recipient (default: the first book address in Delivered-To, To, Cc)',
  })
  declare to?: string

  async run() {
    if (process.stdin.isTTY) {
      // Nothing piped in: reading the terminal would wait for ever.
      this.logger.error('Pipe the message in: node ace mail:ingest < message.eml')
      this.exitCode = 1
      return
    }
    // Imported here: listing the commands must not load the application's services.
    const { MailInService } = await import('../services/mail_in/mail_in_service.js')
    const { MailRefusal } = await import('../services/mail_in/mail_refusal.js')
    const mail = await this.app.container.make(MailInService)
    try {
      const stored = await mail.ingest(process.stdin, { source: 'cli', recipient: this.to })
      const what = stored.outcome === 'stored' ? 'Stored as' : 'Already stored as'
      this.logger.success(
        `${what} message ${stored.smid} of ${stored.book.b_c} (${stored.book.b_o})`
      )
    } catch (error) {
      if (!(error instanceof MailRefusal)) throw error
      this.logger.error(`Refused (${error.code}): ${error.message}`)
      this.exitCode = 1
    }
  }
}
