import app from '@adonisjs/core/services/app'
import type { BaseCommand } from '@adonisjs/core/ace'
import { UserService } from '#core/services/user_service'
import { LocalClient, localActor } from './interface_client.js'
import {
  TransferStopped,
  type BookImporter,
  type TransferProgress,
  type TransferReport,
} from './book_importer.js'

/** The local user a command acts as: `--as` (a user code, e-mail or phone), who must be active. */
export async function localClientFor(login: string | undefined) {
  if (!login) throw new Error('Name the local user who receives the data: --as <login>')
  const users = await app.container.make(UserService)
  const user = await users.findByLogin(login)
  if (!user || user.disabledAt) throw new Error(`No active local user ${login}`)
  return new LocalClient(localActor(user))
}

const WIDTH = 24

/** A text progress bar: `[#########---------------]  37% messages 18/49 (owner/book)`. */
export function progressLine(progress: TransferProgress) {
  const share = progress.total > 0 ? Math.min(1, progress.done / progress.total) : 1
  const filled = Math.round(share * WIDTH)
  const percent = String(Math.round(share * 100)).padStart(3)
  return `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${percent}% ${progress.phase} ${progress.done}/${progress.total} (${progress.book})`
}

/**
 * The progress bar drawn through the ace UI's task (task.update): redrawn when the phase
 * changes or the bar moves by a step, so a log without a terminal stays short.
 */
export function throttledProgress(update: (line: string) => void) {
  let last = ''
  return (progress: TransferProgress) => {
    const share = progress.total > 0 ? progress.done / progress.total : 1
    const step = Math.floor(share * 10)
    const key = `${progress.book}|${progress.phase}|${step}`
    if (key === last) return
    last = key
    update(progressLine(progress))
  }
}

/** The report's lines: counts, then what could not be copied. */
export function reportLines(report: TransferReport) {
  const counts = Object.entries(report.counts)
    .map(([what, count]) => `${count} ${what}`)
    .join(', ')
  const lines = [`${report.books} book(s): ${counts || 'nothing new to write'}`]
  for (const [from, to] of Object.entries(report.mapping))
    lines.push(`  ${from} -> ${to.b_o}/${to.b_c}`)
  if (report.problems.length === 0) lines.push('Everything was copied.')
  else {
    lines.push(`${report.problems.length} item(s) could not be copied:`)
    for (const problem of report.problems) lines.push(`  - ${problem}`)
  }
  return lines
}

/**
 * Runs an import as a command's task, its progress bar the task's line (`makeImporter` gets the
 * progress callback). Ctrl-C ends it after the write under way, its mapping saved (SIGTERM stays
 * the application's: bin/console.ts terminates the app on it). Answers the importer, whether it
 * stopped before the end (--stop-after, Ctrl-C) and whether the task failed.
 */
export async function runImportTask(
  command: BaseCommand,
  title: string,
  makeImporter: (progress: (progress: TransferProgress) => void) => BookImporter
) {
  let update = (_line: string) => {}
  const importer = makeImporter(throttledProgress((line) => update(line)))
  let stopped = false
  const tasks = command.ui.tasks()
  tasks.add(title, async (task) => {
    update = (line) => task.update(line)
    try {
      await importer.run()
    } catch (error) {
      if (!(error instanceof TransferStopped)) throw error
      stopped = true
      return `stopped after ${error.writes} writes: run the same command again to continue`
    }
    return 'done'
  })
  const stop = () => importer.requestStop()
  process.once('SIGINT', stop)
  try {
    await tasks.run()
  } finally {
    process.off('SIGINT', stop)
  }
  return { importer, stopped, failed: tasks.getState() === 'failed' }
}
