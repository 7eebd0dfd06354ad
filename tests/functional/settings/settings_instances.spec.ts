import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import logger from '@adonisjs/core/services/logger'
import quireConfig from '#config/quire'
import env from '#start/env'
import settings from '#core/settings/main'
import { SettingsService } from '#core/settings/settings_service'
import { RedisSettingsBus } from '#core/settings/settings_bus'
import { AuditLog } from '#core/audit/audit_log'

/** Polls `read` until it answers `expected`, for up to 5 s; answers the last value read. */
async function eventually<T>(read: () => T, expected: T): Promise<T> {
  const deadline = Date.now() + 5000
  let value = read()
  while (value !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    value = read()
  }
  return value
}

test.group('settings: every instance applies a change', (group) => {
  group.each.setup(() => async () => {
    await settings.update('webhooks.timeoutMs', null)
  })

  test('with Redis, another instance (its own service and subscriber) reloads on the change')
    .skip(!quireConfig.redisEnabled, 'needs Redis (REDIS_HOST): one process has nothing to tell')
    .run(async ({ assert, cleanup }) => {
      const { default: redis } = await import('@adonisjs/redis/services/main')
      // A second instance: the same declarations and database, its own subscription to the channel.
      const other = new SettingsService(
        settings.registry,
        new RedisSettingsBus(redis.connection(), logger, env.get('REDIS_PREFIX', 'quire:')),
        logger,
        (name) => env.get(name as any),
        await app.container.make(AuditLog)
      )
      await other.start()
      cleanup(() => other.stop())
      assert.equal(other.integer('webhooks.timeoutMs'), 10_000)

      await settings.update('webhooks.timeoutMs', 1234)
      assert.equal(await eventually(() => other.integer('webhooks.timeoutMs'), 1234), 1234)
      assert.equal(
        other.list().find((s) => s.setting.fullKey === 'webhooks.timeoutMs')?.source,
        'database'
      )

      await settings.update('webhooks.timeoutMs', null)
      assert.equal(await eventually(() => other.integer('webhooks.timeoutMs'), 10_000), 10_000)
    })

  test('without Redis, the change applies in this process at once', async ({ assert }) => {
    await settings.update('webhooks.timeoutMs', 777)
    // No wait: update answers once this process's value has changed.
    assert.equal(settings.integer('webhooks.timeoutMs'), 777)
  })
})
