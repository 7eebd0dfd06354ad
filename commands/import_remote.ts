import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Copies what an account can see on a server speaking the interface into this one, as the
 * local user `--as` (docs/import-export.md). Resumable and idempotent through its state file.
 */
export default class ImportRemote extends BaseCommand {
  static commandName = 'import:remote'
  static description =
    'Copy the books an account sees on a compatible server (messages, members, tables, files) into this one'
  static options: CommandOptions = { startApp: true }

  @flags.string({
    description: 'The remote server, e.g. https://quire.example.org',
    required: true,
  })
  declare baseUrl: string

  @flags.string({ description: 'Remote login (user code, e-mail or phone), with --password' })
  declare login?: string

  @flags.string({ description: 'Remote password' })
  declare password?: string

  @flags.string({
    flagName: 'o-u',
    description: 'Remote user code of an existing session, with --sesskey',
  })
  declare oU?: string

  @flags.string({ description: 'Remote sesskey of an existing session' })
  declare sesskey?: string

  @flags.string({ description: 'The local user who receives the books (code, e-mail or phone)' })
  declare as?: string

  @flags.string({
    description:
      'State file (default: <DATA_DIR>/transfer/import-<host>-<account>-<local user>.json)',
  })
  declare state?: string

  @flags.number({ description: 'Stop after this many writes (a later run continues)' })
  declare stopAfter?: number

  @flags.string({ description: 'Also write the report as JSON to this file' })
  declare report?: string

  async run() {
    const { RemoteClient } = await import('#core/transfer/interface_client')
    const { ApiSource } = await import('#core/transfer/transfer_source')
    const { TransferState } = await import('#core/transfer/transfer_state')
    const { BookImporter } = await import('#core/transfer/book_importer')
    const support = await import('#core/transfer/command_support')
    const { dataDir } = await import('#config/quire')

    try {
      const local = await support.localClientFor(this.as)
      const remote = new RemoteClient(this.baseUrl)
      await remote.signIn({
        login: this.login,
        password: this.password,
        o_u: this.oU,
        sesskey: this.sesskey,
      })
      const host = new URL(remote.baseUrl).host.replace(/[^\w.-]+/g, '_')
      const statePath =
        this.state ??
        join(dataDir, 'transfer', `import-${host}-${remote.userCode}-${local.userCode}.json`)
      const state = await TransferState.open(
        statePath,
        `${remote.baseUrl}#${remote.userCode}`,
        local.userCode
      )
      const source = new ApiSource(remote, remote.baseUrl)
      const { importer, stopped, failed } = await support.runImportTask(
        this,
        `Import from ${remote.baseUrl} as ${local.userCode}`,
        (progress) =>
          new BookImporter(source, local, state, {
            stopAfter: this.stopAfter,
            sourceUser: remote.userCode,
            progress,
          })
      )
      const report = importer.report
      for (const line of support.reportLines(report)) this.logger.info(line)
      this.logger.info(`State: ${statePath}`)
      if (this.report) {
        await writeFile(this.report, JSON.stringify({ ...report, stopped, state: statePath }))
      }
      if (failed) this.exitCode = 1
    } catch (error) {
      this.logger.error((error as Error).message)
      this.exitCode = 1
    }
  }
}
