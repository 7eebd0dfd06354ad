import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Reads a book archive written by `node ace export` into this server (docs/import-export.md). */
export default class ImportArchive extends BaseCommand {
  static commandName = 'import:archive'
  static description = 'Import a book archive (.tar.gz written by node ace export) as a local user'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'The archive (.tar.gz)' })
  declare archive: string

  @flags.string({ description: 'The local user who receives the book (code, e-mail or phone)' })
  declare as?: string

  @flags.string({
    description: 'State file (default: <DATA_DIR>/transfer/archive-<book>-<local user>.json)',
  })
  declare state?: string

  @flags.number({ description: 'Stop after this many writes (a later run continues)' })
  declare stopAfter?: number

  @flags.string({ description: 'Also write the report as JSON to this file' })
  declare report?: string

  async run() {
    const { ArchiveSource } = await import('#core/transfer/book_archive')
    const { TransferState } = await import('#core/transfer/transfer_state')
    const { BookImporter } = await import('#core/transfer/book_importer')
    const support = await import('#core/transfer/command_support')
    const { dataDir } = await import('#config/quire')

    let source: Awaited<ReturnType<typeof ArchiveSource.open>> | null = null
    try {
      const local = await support.localClientFor(this.as)
      const archive = await ArchiveSource.open(this.archive)
      source = archive
      const book = archive.document.book
      const name = `${book.b_o}-${book.b_c}`.replace(/[^\w.-]+/g, '_')
      const statePath =
        this.state ?? join(dataDir, 'transfer', `archive-${name}-${local.userCode}.json`)
      const state = await TransferState.open(statePath, archive.label, local.userCode)
      const { importer, stopped, failed } = await support.runImportTask(
        this,
        `Import ${this.archive} as ${local.userCode}`,
        (progress) =>
          new BookImporter(archive, local, state, { stopAfter: this.stopAfter, progress })
      )
      for (const line of support.reportLines(importer.report)) this.logger.info(line)
      if (this.report) {
        await writeFile(
          this.report,
          JSON.stringify({ ...importer.report, stopped, state: statePath })
        )
      }
      if (failed) this.exitCode = 1
    } catch (error) {
      this.logger.error((error as Error).message)
      this.exitCode = 1
    } finally {
      await source?.close()
    }
  }
}
