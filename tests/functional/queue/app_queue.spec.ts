import app from '@adonisjs/core/services/app'
import { test } from '@japa/runner'
import { QueueService } from '#core/services/queue_service'
import { hasRedis } from '#tests/helpers/database'
import { untilState } from '#tests/helpers/queue'

const queue = await app.container.make(QueueService)

/** The queue as plugins get it: the booted singleton, handlers from the manifests. */
test.group('the application job queue', () => {
  test('uses BullMQ when Redis is configured, the in-process queue otherwise', ({ assert }) => {
    assert.equal(queue.driver.kind, hasRedis() ? 'bullmq' : 'memory')
    assert.isTrue(queue.working, 'the test process runs jobs, as the web process does')
  })

  test('runs a job declared in a manifest (core.probe)', async ({ assert }) => {
    const { id, duplicate } = await queue.dispatch('core.probe', {}, { attempts: 1 })
    assert.isFalse(duplicate)
    const done = await untilState(queue, id, 'completed', 10_000)
    assert.equal(done.name, 'core.probe')
    assert.properties(done.result, ['pid', 'host', 'attempt', 'finishedAt'])
  }).timeout(20_000)

  test('refuses a job that no enabled plugin declares', async ({ assert }) => {
    await assert.rejects(
      () => queue.dispatch('nobody.nothing', {}),
      'No plugin declares the job "nobody.nothing" (manifest `jobs`)'
    )
  })
})
