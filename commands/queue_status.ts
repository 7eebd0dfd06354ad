import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { QueueService } from '#core/services/queue_service'

/** Counts of jobs per state, for operators. */
export default class QueueStatus extends BaseCommand {
  static commandName = 'queue:status'
  static description = 'Count jobs per state (waiting, delayed, active, completed, dead)'
  static options: CommandOptions = { startApp: true }

  async run() {
    const { default: config } = await import('#config/queue')
    if (config.driver !== 'bullmq') {
      this.logger.info(
        'In-process queue (no REDIS_HOST): its jobs live inside the web process, not visible from here.'
      )
      return
    }
    const queue = await this.app.container.make(QueueService)
    const counts = await queue.counts()
    const table = this.ui.table().head(['state', 'jobs'])
    for (const [state, count] of Object.entries(counts)) table.row([state, String(count)])
    table.render()
  }
}
