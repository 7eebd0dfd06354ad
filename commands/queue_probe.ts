import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { QueueService } from '#core/services/queue_service'

/** Proves that some worker takes jobs: dispatches `core.probe` and waits for it. */
export default class QueueProbe extends BaseCommand {
  static commandName = 'queue:probe'
  static description = 'Dispatch a probe job and wait until a worker has run it'
  static options: CommandOptions = { startApp: true }

  @flags.number({ description: 'Seconds to wait (default 30)' })
  declare timeout?: number

  async run() {
    const queue = await this.app.container.make(QueueService)
    const { id } = await queue.dispatch('core.probe', {}, { attempts: 1 })
    const deadline = Date.now() + (this.timeout ?? 30) * 1000
    while (Date.now() < deadline) {
      const status = await queue.status(id)
      if (status?.state === 'completed') {
        const result = status.result as { pid: number; host: string }
        this.logger.success(`probe ${id} ran in process ${result.pid} on ${result.host}`)
        return
      }
      if (status?.state === 'dead') {
        this.logger.error(`probe ${id} failed: ${status.error}`)
        this.exitCode = 1
        return
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    this.logger.error(
      `probe ${id} was not run within the time allowed: is a worker running (node ace queue:work)?`
    )
    this.exitCode = 1
  }
}
