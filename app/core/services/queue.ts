import app from '@adonisjs/core/services/app'
import type { QueueService } from '#core/services/queue_service'

/** The booted QueueService singleton: `await queue.dispatch('<plugin>.<job>', payload, options)`. */
let queue: QueueService

await app.booted(async () => {
  queue = await app.container.make('quire.queue')
})

export { queue as default }
