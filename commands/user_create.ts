import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** For operators: creates a user who can log in through createOauthkey. */
export default class UserCreate extends BaseCommand {
  static commandName = 'user:create'
  static description = 'Create a user (code, e-mail, password), optionally an administrator'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'User code (u_c)' })
  declare code: string

  @args.string({ description: 'E-mail address' })
  declare email: string

  @args.string({
    description: 'Password (AUTH_PASSWORD_MIN_LENGTH characters or more, 8 by default)',
  })
  declare password: string

  @flags.boolean({ description: 'Grant administrator rights' })
  declare admin: boolean

  @flags.string({ description: 'Phone number' })
  declare phone?: string

  @flags.string({ description: 'First name' })
  declare firstName?: string

  @flags.string({ description: 'Last name' })
  declare lastName?: string

  async run() {
    // The one password policy (also enforced by UserService.create): refused before any write.
    const { passwordPolicy } = await import('#core/services/password_policy')
    const [problem] = passwordPolicy.problems(this.password)
    if (problem) {
      this.logger.error(problem)
      this.exitCode = 1
      return
    }
    const { UserService } = await import('#core/services/user_service')
    const users = await this.app.container.make(UserService)
    const { cliActor } = await import('#core/audit/audit_log')
    try {
      const user = await users.create(
        {
          code: this.code,
          email: this.email,
          phone: this.phone ?? null,
          password: this.password,
          firstName: this.firstName,
          lastName: this.lastName,
          isAdmin: this.admin,
        },
        cliActor(UserCreate.commandName)
      )
      this.logger.success(
        `Created user ${user.code} <${user.email}>${user.isAdmin ? ' (administrator)' : ''}`
      )
    } catch (error) {
      this.logger.error((error as Error).message)
      this.exitCode = 1
    }
  }
}
