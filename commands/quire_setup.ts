import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { PluginRegistry } from '#core/plugins/plugin_registry'

interface DemoAdmin {
  code: string
  email: string
  password: string
}

/**
 * First step of `npm start`: migrates the database and, on a fresh install,
 * creates a demo administrator (plus each plugin's demo data). The demo
 * credentials are kept in the data folder so every start can print them.
 */
export default class QuireSetup extends BaseCommand {
  static commandName = 'quire:setup'
  static description =
    'Migrate the database and create the demo admin on a fresh install (used by npm start)'
  static options: CommandOptions = { startApp: true }

  async run() {
    const migrate = await this.kernel.exec('migration:run', ['--force'])
    if (migrate.exitCode) {
      this.exitCode = migrate.exitCode
      return
    }

    // The admin console's bundle (public/assets), built when missing or older than its sources.
    const { ensureConsoleBuilt } = await import('#admin/build')
    if (await ensureConsoleBuilt(this.app.makePath())) {
      this.logger.action('admin console built (public/assets)').succeeded()
    }

    const { dataDir } = await import('#config/quire')
    const { UserService } = await import('#core/services/user_service')
    const { passwordPolicy } = await import('#core/services/password_policy')
    const users = await this.app.container.make(UserService)
    const { default: User } = await import('#models/user')
    const credentialsFile = join(dataDir, 'demo-admin.json')

    let admin: DemoAdmin | null = existsSync(credentialsFile)
      ? JSON.parse(await readFile(credentialsFile, 'utf8'))
      : null

    if (!admin && !(await User.query().where('isAdmin', true).first())) {
      admin = {
        code: 'admin',
        email: 'admin@quire.local',
        // Meets the password policy whatever AUTH_PASSWORD_MIN_LENGTH says.
        password: passwordPolicy.generate(),
      }
      const { cliActor } = await import('#core/audit/audit_log')
      const user = await users.create(
        { ...admin, firstName: 'Demo', lastName: 'Admin', isAdmin: true },
        cliActor(QuireSetup.commandName)
      )
      await writeFile(credentialsFile, JSON.stringify(admin, null, 2), { mode: 0o600 })
      await this.seedDemoData(user.id)
    }

    if (admin) {
      this.logger.log('')
      this.logger.log(this.colors.bold('Quire demo administrator'))
      this.logger.log(`  login (e-mail): ${admin.email}`)
      this.logger.log(`  user code:      ${admin.code}`)
      this.logger.log(`  password:       ${admin.password}`)
      const { consoleSettings } = await import('#admin/console_settings')
      if (consoleSettings.adminTotpRequired)
        this.logger.log(
          '  two-factor:     required: the first sign-in enrols an authenticator app (ADMIN_TOTP_REQUIRED)'
        )
      this.logger.log(`  (kept in ${credentialsFile})`)
      this.logger.log('')
    }
  }

  private async seedDemoData(adminId: number) {
    const registry = await this.app.container.make(PluginRegistry)
    for (const plugin of registry.plugins) {
      if (!plugin.demo) continue
      const { default: seed } = await plugin.demo()
      await seed({ adminId })
      this.logger.action(`demo data: ${plugin.id}`).succeeded()
    }
  }
}
