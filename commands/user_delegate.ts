import { BaseCommand, args } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Lets one user (a chatbot, an integration) act on behalf of another: u_c may then differ from o_u. */
export default class UserDelegate extends BaseCommand {
  static commandName = 'user:delegate'
  static description = 'Authorize DELEGATE (o_u) to act on behalf of USER (u_c)'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'The user acted for (code, e-mail or phone)' })
  declare user: string

  @args.string({ description: 'The delegate who will send o_u (code, e-mail or phone)' })
  declare delegate: string

  async run() {
    const { UserService } = await import('#core/services/user_service')
    const users = await this.app.container.make(UserService)
    const user = await users.findByLogin(this.user)
    const delegate = await users.findByLogin(this.delegate)
    if (!user || !delegate) {
      this.logger.error(`Unknown user: ${!user ? this.user : this.delegate}`)
      this.exitCode = 1
      return
    }
    const { cliActor } = await import('#core/audit/audit_log')
    await users.grantDelegation(user.id, delegate.id, cliActor(UserDelegate.commandName))
    this.logger.success(`${delegate.code} may now act on behalf of ${user.code}`)
  }
}
