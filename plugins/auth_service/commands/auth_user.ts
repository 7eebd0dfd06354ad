import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Per-user settings of the authentication service: TOTP policy, lost second factor, forced password change. */
export default class AuthUser extends BaseCommand {
  static commandName = 'auth:user'
  static description =
    "Show or change a user's authentication settings (TOTP policy and enrolment, forced password change)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'The user (code, e-mail or phone)' })
  declare login: string

  @flags.string({
    description:
      'TOTP policy for this user: required, optional, or default (follow AUTH_TOTP_POLICY)',
  })
  declare totp?: string

  @flags.boolean({ description: 'Forget the enrolled second factor (lost device)' })
  declare resetTotp: boolean

  @flags.boolean({
    description:
      'Require (or with --no-must-change-password, stop requiring) a password change at next login',
  })
  declare mustChangePassword?: boolean

  async run() {
    // Imported here: listing the commands must not load the application's services.
    const { UserService } = await import('#core/services/user_service')
    const { AuthUserService } = await import('../services/auth_user_service.js')
    const { default: authConfig } = await import('../config.js')
    const users = await this.app.container.make(UserService)
    const authUsers = await this.app.container.make(AuthUserService)
    const user = await users.findByLogin(this.login)
    if (!user) {
      this.logger.error(`Unknown user: ${this.login}`)
      this.exitCode = 1
      return
    }
    if (this.totp !== undefined) {
      if (!['required', 'optional', 'default'].includes(this.totp)) {
        this.logger.error('--totp must be required, optional or default')
        this.exitCode = 1
        return
      }
      await authUsers.setPolicy(
        user,
        this.totp === 'default' ? null : (this.totp as 'required' | 'optional')
      )
    }
    if (this.resetTotp) await authUsers.resetTotp(user)
    if (this.mustChangePassword !== undefined)
      await authUsers.setMustChangePassword(user, this.mustChangePassword)

    const row = await authUsers.ensure(user)
    this.logger.log(
      [
        `${user.code} <${user.email ?? ''}> uuid ${row.uuid}`,
        `  TOTP: ${authUsers.isEnrolled(row) ? 'enrolled' : 'not enrolled'}, policy ${row.totp_policy ?? `default (${authConfig.totp.policy})`}, ${authUsers.requiresTotp(row) ? 'required' : 'optional'} at login`,
        `  must change password: ${row.must_change_password}`,
      ].join('\n')
    )
  }
}
