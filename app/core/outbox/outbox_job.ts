import app from '@adonisjs/core/services/app'
import type { JobHandler } from '#core/plugins/define_plugin'
import { OutboxService, type OutboxJobPayload } from './outbox_service.js'

/**
 * `core.outbox`: one attempt of one delivery. Retries are the outbox's (its
 * backoff, its log), not the queue's: the job runs once and, when the
 * attempt failed, the outbox dispatches the next one with its delay.
 */
const outboxJob: JobHandler = async (payload: OutboxJobPayload) => {
  const outbox = await app.container.make(OutboxService)
  await outbox.run(payload)
}

export default outboxJob
