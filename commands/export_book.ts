import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Writes one book to a portable archive: JSON + files (docs/import-export.md). */
export default class ExportBook extends BaseCommand {
  static commandName = 'export'
  static description = 'Export a book (<b_o>/<b_c>) to a portable archive (.tar.gz: JSON + files)'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'The book, as <b_o>/<b_c>' })
  declare book: string

  @flags.string({ description: 'The archive to write', required: true })
  declare out: string

  @flags.string({ description: 'Read the book as this member (default: its owner, b_o)' })
  declare as?: string

  async run() {
    const { BookExporter } = await import('#core/transfer/book_exporter')
    const support = await import('#core/transfer/command_support')
    const match = /^([^/]+)\/(.+)$/.exec(this.book ?? '')
    if (!match) {
      this.logger.error('Name the book as <b_o>/<b_c>')
      this.exitCode = 1
      return
    }
    try {
      const local = await support.localClientFor(this.as ?? match[1])
      // The progress bar is the ace task's line, known once the task runs.
      let update = (_line: string) => {}
      const progress = support.throttledProgress((line) => update(line))
      const exporter = new BookExporter(
        local,
        { b_o: match[1], b_c: match[2] },
        (phase, done, total) => progress({ book: this.book, phase, done, total })
      )
      const tasks = this.ui.tasks()
      tasks.add(`Export ${this.book} to ${this.out}`, async (task) => {
        update = (line) => task.update(line)
        const report = await exporter.export(this.out)
        return `${report.messages} messages, ${report.tables} tables, ${report.rows} rows, ${report.comments} comments, ${report.files} files`
      })
      await tasks.run()
      for (const problem of exporter.report.problems) this.logger.warning(problem)
      if (tasks.getState() === 'failed') this.exitCode = 1
    } catch (error) {
      this.logger.error((error as Error).message)
      this.exitCode = 1
    }
  }
}
