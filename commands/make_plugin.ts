import { BaseCommand, args } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { scaffoldPlugin } from '#core/scaffold/plugin_scaffold'

/** The extension author's entry point: a working plugin folder, enabled in config/plugins.ts. */
export default class MakePlugin extends BaseCommand {
  static commandName = 'make:plugin'
  static description =
    'Scaffold a plugin (manifest, provider, service, one operation, one migration, one test) and enable it'
  static options: CommandOptions = { startApp: false }

  @args.string({ description: 'Plugin id (folder name under plugins/), e.g. polls' })
  declare name: string

  async run() {
    try {
      const result = await scaffoldPlugin(this.app.makePath(), this.name)
      for (const file of result.files) this.logger.action(`create ${file}`).succeeded()
      this.logger.action('update config/plugins.ts').succeeded()
      this.logger.info(
        `Run "node ace migration:run" then "node ace test" to see ${result.operation} answer.`
      )
    } catch (error) {
      this.logger.error((error as Error).message)
      this.exitCode = 1
    }
  }
}
