import { test } from '@japa/runner'
import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import app from '@adonisjs/core/services/app'
import quireConfig from '#config/quire'
import env from '#start/env'
import { QueueService } from '#core/services/queue_service'
import { InstanceRegistry } from '#core/health/instances'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { ConsoleClient, pageOf, signedInAdmin } from './console_client.js'

/** Polls `read` until `accept` holds (deliveries and workers are asynchronous); fails after 20 s. */
/** The Health page's props, as an administrator's console gets them. */
async function healthOf(client: ConsoleClient) {
  const page = await pageOf(client, '/admin/health')
  return page.props
}

async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const value = await read()
    if (accept(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

test.group('admin console: Health page', () => {
  test('shows the build, this instance, the database, Redis, jobs and the plugins’ sections', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const { props } = await pageOf(client, '/admin/health')
    const { version } = JSON.parse(readFileSync(app.makePath('package.json'), 'utf8'))
    assert.equal(props.about.version, version)
    assert.isAtLeast(props.about.uptimeSeconds, 0)
    const registry = await app.container.make(InstanceRegistry)
    const self = props.instances.find((instance: any) => instance.self)
    assert.equal(self.id, registry.id)
    assert.isFalse(self.gone)
    assert.isTrue(props.stores.database.ok)
    assert.isString(props.stores.database.version)
    if (quireConfig.redisEnabled) {
      assert.isTrue(props.stores.redis.ok)
      assert.match(props.stores.redis.memory, /\d/)
    } else assert.isNull(props.stores.redis)
    assert.isTrue(props.jobs.ok)
    assert.properties(props.jobs.counts, ['waiting', 'delayed', 'active', 'completed', 'dead'])
    // The media plugin's section, contributed through its manifest (admin.health).
    const media = props.sections.find((section: any) => section.key === 'media')
    assert.isTrue(media.ok)
    assert.include(
      media.lines.map((line: any) => line.label),
      'Files'
    )
    assert.deepInclude(
      props.nav.map((entry: any) => entry.href),
      '/admin/health'
    )
  })

  test('an error logged anywhere is listed with its reference', async ({ assert }) => {
    const { client } = await signedInAdmin()
    const logger = await app.container.make('logger')
    const reference = randomUUID().slice(0, 8)
    logger.error(
      { err: new Error('the disk is on fire'), reference, url: '/live/api.php' },
      'request failed'
    )
    const errors = await eventually(
      async () => {
        const props = await healthOf(client)
        return props.errors
      },
      (list: any[]) => list.some((entry) => entry.reference === reference)
    )
    const entry = errors.find((candidate: any) => candidate.reference === reference)
    assert.equal(entry.message, 'request failed')
    assert.equal(entry.error, 'Error: the disk is on fire')
    assert.equal(entry.where, '/live/api.php')
  })

  test('a failed job is listed by name with its error, and Retry puts it back in line', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const queue = await app.container.make(QueueService)
    const name = `health.unknown.${randomUUID().slice(0, 8)}`
    // A job no plugin handles fails at once, for good: what an operator must see.
    const id = randomUUID()
    await queue.driver.add({ id, name, payload: {}, attempts: 1, backoff: 0, delay: 0 })
    const failed = await eventually(
      async () => {
        const props = await healthOf(client)
        return props.jobs.failed
      },
      (list: any[]) => list.some((job) => job.id === id)
    )
    const job = failed.find((candidate: any) => candidate.id === id)
    assert.equal(job.name, name)
    assert.include(job.error, 'No enabled plugin handles the job')
    const { jobs } = await healthOf(client)
    assert.deepInclude(jobs.byName, { name, waiting: 0, delayed: 0, active: 0, dead: 1 })

    const retried = await client.post(`/admin/health/jobs/${id}/retry`)
    assert.equal(retried.location, '/admin/health')
    const after = await pageOf(client, '/admin/health')
    assert.equal(after.props.notice, 'The job is back in line')
    // It fails again (nobody handles it), and is listed again.
    await eventually(
      async () => {
        const props = await healthOf(client)
        return props.jobs.failed
      },
      (list: any[]) => list.some((candidate) => candidate.id === id)
    )
    await client.post(`/admin/health/jobs/not-a-job/retry`)
    const refused = await healthOf(client)
    assert.equal(refused.notice, 'This job is no longer failed')
    await queue.purgeDead()
  })

  test('with Redis, other instances are listed; a silent one is shown as gone, then forgotten', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const { default: redis } = await import('@adonisjs/redis/services/main')
    const key = `${env.get('REDIS_PREFIX', 'quire:')}instances`
    const report = (id: string, lastSeen: number) =>
      JSON.stringify({
        id,
        host: 'other',
        pid: 1,
        version: '0',
        startedAt: lastSeen,
        lastSeen,
        sockets: 3,
        requestsPerSecond: 12.5,
        memory: 1,
      })
    const alive = `other:${randomUUID().slice(0, 6)}`
    const silent = `other:${randomUUID().slice(0, 6)}`
    const forgotten = `other:${randomUUID().slice(0, 6)}`
    await redis.connection().hset(key, alive, report(alive, Date.now()))
    await redis.connection().hset(key, silent, report(silent, Date.now() - 60_000))
    await redis.connection().hset(key, forgotten, report(forgotten, Date.now() - 3600_000))
    try {
      const { props } = await pageOf(client, '/admin/health')
      const byId = new Map(props.instances.map((instance: any) => [instance.id, instance]))
      assert.deepInclude(byId.get(alive), { gone: false, sockets: 3, requestsPerSecond: 12.5 })
      assert.deepInclude(byId.get(silent), { gone: true })
      assert.isFalse(byId.has(forgotten))
      assert.isNull(await redis.connection().hget(key, forgotten))
    } finally {
      await redis.connection().hdel(key, alive, silent, forgotten)
    }
  }).skip(!quireConfig.redisEnabled, 'needs Redis (REDIS_HOST): instances report through it')

  test('only administrators see it', async ({ assert }) => {
    const user = await makeUser()
    const client = new ConsoleClient()
    await client.signIn(user.email!, TEST_PASSWORD)
    const answer = await client.get('/admin/health', { inertia: false })
    assert.notEqual(answer.status, 200)
    assert.notInclude(answer.text, 'Background jobs')
    const retried = await client.post('/admin/health/jobs/anything/retry')
    assert.notEqual(retried.location, '/admin/health')
  })
})
