import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { QueueService } from '#core/services/queue_service'

/**
 * Runs job workers as a separate process, next to (or instead of) the web
 * process's inline worker. SIGTERM or Ctrl-C stops taking jobs and lets
 * running ones finish (QUEUE_SHUTDOWN_TIMEOUT); a worker killed outright
 * loses nothing: its jobs run again elsewhere once their lock expires.
 */
export default class QueueWork extends BaseCommand {
  static commandName = 'queue:work'
  static description = 'Run job workers in this process (needs Redis: REDIS_HOST)'
  static options: CommandOptions = { startApp: true, staysAlive: true }

  @flags.number({ description: 'Jobs run at once (default: QUEUE_CONCURRENCY)' })
  declare concurrency?: number

  /** A staysAlive command's exit code is only copied on a later termination: set the process's too. */
  private async fail() {
    this.exitCode = 1
    process.exitCode = 1
    await this.terminate()
  }

  async run() {
    const { default: config } = await import('#config/queue')
    if (config.driver !== 'bullmq') {
      this.logger.error(
        'queue:work needs Redis (set REDIS_HOST). Without it, jobs run inside the process that dispatches them.'
      )
      return this.fail()
    }
    if (
      this.concurrency !== undefined &&
      (!Number.isInteger(this.concurrency) || this.concurrency < 1)
    ) {
      this.logger.error('--concurrency must be a whole number of at least 1')
      return this.fail()
    }

    const stop = () => {
      this.logger.info(`worker ${process.pid}: stopping, running jobs may finish`)
      void this.terminate()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)

    const queue = await this.app.container.make(QueueService)
    const concurrency = this.concurrency ?? config.concurrency
    await queue.startWorker(concurrency)
    this.logger.info(
      `worker ${process.pid}: taking jobs from "${config.redis.queueName}" on Redis ${config.redis.connection.host}:${config.redis.connection.port} (concurrency ${concurrency})`
    )
  }
}
