import type { ApplicationService } from '@adonisjs/core/types'
import type { Logger } from '@adonisjs/core/logger'
import { QueueService } from '#core/services/queue_service'
import { PluginRegistry } from '#core/plugins/plugin_registry'

/**
 * The job queue: BullMQ on Redis when configured, in-process otherwise. The
 * web process (and the test runner, which serves HTTP too) runs jobs itself
 * unless QUEUE_INLINE_WORKER=false leaves them to `node ace queue:work`.
 */
export default class QueueProvider {
  /** Set once something asked for the queue: shutdown then has something to drain. */
  private resolved = false

  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton(QueueService, async (resolver) => {
      this.resolved = true
      const { default: config } = await import('#config/queue')
      const logger = await resolver.make('logger')
      const driver = await this.makeDriver(config, logger)
      return new QueueService(
        driver,
        async () => {
          const registry = await resolver.make(PluginRegistry)
          return registry.jobs
        },
        config,
        logger
      )
    })
  }

  async ready() {
    const { default: config } = await import('#config/queue')
    const inProcess = config.driver === 'memory'
    const serving = ['web', 'test'].includes(this.app.getEnvironment())
    // The in-process queue has no other worker: its jobs run wherever they are dispatched.
    if (inProcess || (serving && config.inlineWorker)) {
      const queue = await this.app.container.make(QueueService)
      // Not awaited: an unreachable Redis must not hold up the HTTP server; BullMQ keeps reconnecting.
      queue.startWorker().catch(async (error) => {
        const logger = await this.app.container.make('logger')
        logger.error({ err: error }, 'job worker could not start')
      })
    }
  }

  /**
   * Terminating hooks run before any provider's shutdown, so running jobs
   * still have the database and Redis while they finish.
   */
  async boot() {
    this.app.terminating(async () => {
      if (!this.resolved) return
      const queue = await this.app.container.make(QueueService)
      await queue.shutdown()
    })
  }

  private async makeDriver(config: typeof import('#config/queue').default, logger: Logger) {
    if (config.driver === 'bullmq') {
      const { BullMqQueueDriver } = await import('#core/jobs/bullmq_queue_driver')
      return new BullMqQueueDriver({
        connection: config.redis.connection,
        prefix: config.redis.prefix,
        queueName: config.redis.queueName,
        idempotencyTtlMs: config.idempotencyTtlMs,
        lockMs: config.lockMs,
        logger,
      })
    }
    const { MemoryQueueDriver } = await import('#core/jobs/memory_queue_driver')
    return new MemoryQueueDriver({
      idempotencyTtlMs: config.idempotencyTtlMs,
      deadLetterLimit: config.memoryDeadLetterLimit,
      logger,
    })
  }
}
