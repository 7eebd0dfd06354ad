import { writeFile, mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { buildCatalogue } from '#core/reference/catalogue'
import {
  GENERATED_CLIENT_FILE,
  formatClient,
  generateClient,
} from '#core/reference/client_generator'

/** Writes resources/client/generated.ts from the operation registry (docs/client.md). */
export default class ClientGenerate extends BaseCommand {
  static commandName = 'client:generate'
  static description =
    'Generate the typed client (resources/client/generated.ts) from the operation registry'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Only check: exit 1 when the committed file is out of date' })
  declare check: boolean

  async run() {
    const registry = await this.app.container.make(PluginRegistry)
    const text = await formatClient(generateClient(await buildCatalogue(registry)))
    const path = this.app.makePath(GENERATED_CLIENT_FILE)
    if (this.check) {
      const { readFile } = await import('node:fs/promises')
      const committed = await readFile(path, 'utf8').catch(() => '')
      if (committed !== text) {
        this.logger.error(`${GENERATED_CLIENT_FILE} is out of date: run npm run build:client`)
        this.exitCode = 1
      } else this.logger.success(`${GENERATED_CLIENT_FILE} is up to date`)
      return
    }
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, text)
    this.logger.success(`wrote ${GENERATED_CLIENT_FILE} (${registry.operations.size} operations)`)
  }
}
