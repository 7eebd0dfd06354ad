import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { QueueService } from '#core/services/queue_service'

/**
 * The dead-letter list: jobs that failed every attempt. Lists them (newest
 * first), puts some back in line with fresh attempts, or forgets them all.
 */
export default class QueueDead extends BaseCommand {
  static commandName = 'queue:dead'
  static description =
    'List dead jobs; --retry=ID (repeatable) or --retry-all re-runs them, --purge forgets them'
  static options: CommandOptions = { startApp: true }

  @flags.number({ description: 'How many to list (default 50)' })
  declare limit?: number

  @flags.array({ description: 'Put this dead job back in line (repeatable)' })
  declare retry?: string[]

  @flags.boolean({ description: 'Put every listed dead job back in line' })
  declare retryAll: boolean

  @flags.boolean({ description: 'Forget every dead job' })
  declare purge: boolean

  async run() {
    const { default: config } = await import('#config/queue')
    if (config.driver !== 'bullmq') {
      this.logger.error(
        'The in-process queue (no REDIS_HOST) keeps its dead jobs inside the web process; they are in its log. Configure Redis to manage them here.'
      )
      this.exitCode = 1
      return
    }
    const queue = await this.app.container.make(QueueService)
    const limit = this.limit ?? 50

    if (this.purge) {
      this.logger.success(`Forgot ${await queue.purgeDead()} dead job(s)`)
      return
    }
    const ids = this.retryAll
      ? await queue.deadLetters(limit).then((dead) => dead.map((job) => job.id))
      : (this.retry ?? [])
    if (ids.length > 0) {
      for (const id of ids) {
        if (await queue.retryDead(id)) this.logger.success(`${id}: back in line`)
        else {
          this.logger.error(`${id}: no such dead job`)
          this.exitCode = 1
        }
      }
      return
    }

    const dead = await queue.deadLetters(limit)
    if (dead.length === 0) {
      this.logger.info('No dead jobs')
      return
    }
    const table = this.ui.table().head(['id', 'job', 'failed at', 'attempts', 'last error'])
    for (const job of dead) {
      table.row([
        job.id,
        job.name,
        job.failedAt.toISOString(),
        String(job.attemptsFailed),
        job.error.slice(0, 120),
      ])
    }
    table.render()
  }
}
