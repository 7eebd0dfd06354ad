import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { RedisConnection } from '@adonisjs/redis'
import redisConfig from '#config/redis'
import { UserKeyedCache } from '#core/invalidation/user_keyed_cache'
import {
  LocalInvalidationBus,
  NoInvalidationBus,
  RedisInvalidationBus,
} from '#core/invalidation/invalidation_bus'
import { hasRedis } from '#tests/helpers/database'

const newCache = (ttlMs = 60_000, maxEntries = 100) =>
  new UserKeyedCache<string>({ ttlMs, maxEntries })

test.group('invalidation: user-keyed cache', () => {
  test('a fill whose read began before its user was invalidated is dropped', ({ assert }) => {
    const cache = newCache()
    const before = cache.mark()
    cache.invalidateUser(7)
    cache.set('k', 'stale', 7, before)
    assert.isUndefined(cache.get('k'))
    // Another user's fill begun at the same time is unaffected.
    cache.set('other', 'fresh', 8, before)
    assert.equal(cache.get('other'), 'fresh')
    cache.set('k', 'fresh', 7, cache.mark())
    assert.equal(cache.get('k'), 'fresh')
  })

  test('clear() drops every entry and every fill begun before it', ({ assert }) => {
    const cache = newCache()
    cache.set('a', 'a', 1, cache.mark())
    const before = cache.mark()
    cache.clear()
    assert.equal(cache.size, 0)
    cache.set('b', 'b', 2, before)
    assert.isUndefined(cache.get('b'))
    cache.set('b', 'b', 2, cache.mark())
    assert.equal(cache.get('b'), 'b')
  })

  test('invalidating a user drops all its entries and only its own; forget drops one', ({
    assert,
  }) => {
    const cache = newCache()
    cache.set('a1', 'a1', 1, cache.mark())
    cache.set('a2', 'a2', 1, cache.mark())
    cache.set('b1', 'b1', 2, cache.mark())
    cache.set('b2', 'b2', 2, cache.mark())
    cache.invalidateUser(1)
    assert.deepEqual(
      ['a1', 'a2', 'b1', 'b2'].map((key) => cache.get(key) ?? null),
      [null, null, 'b1', 'b2']
    )
    cache.forget('b1')
    assert.deepEqual([cache.get('b1') ?? null, cache.get('b2') ?? null], [null, 'b2'])
  })

  test('an entry lives for the TTL counted from its read, then is read again', ({ assert }) => {
    const cache = newCache(1000)
    cache.set('k', 'v', 1, cache.mark(), 5000)
    assert.equal(cache.get('k', 6000), 'v')
    assert.isUndefined(cache.get('k', 6001))
    assert.equal(cache.size, 0)
  })

  test('past the cap the cache starts over rather than growing', ({ assert }) => {
    const cache = newCache(60_000, 3)
    for (const key of ['a', 'b', 'c']) cache.set(key, key, 1, cache.mark())
    assert.equal(cache.size, 3)
    cache.set('d', 'd', 2, cache.mark())
    assert.equal(cache.size, 1)
    assert.equal(cache.get('d'), 'd')
    assert.isUndefined(cache.get('a'))
    // Invalidations of users without entries are bounded by the same cap: a fill begun before
    // the start-over is refused like any fill older than a clear().
    const before = cache.mark()
    for (const userId of [10, 11, 12, 13]) cache.invalidateUser(userId)
    cache.set('e', 'e', 3, before)
    assert.isUndefined(cache.get('e'))
  })
})

test.group('invalidation: in-process and no-cache buses', () => {
  test('the local bus drops at once and is always trusted; the no-cache bus has nothing to trust', async ({
    assert,
  }) => {
    const cache = newCache()
    const local = new LocalInvalidationBus(cache)
    cache.set('a', 'a', 1, cache.mark())
    cache.set('b', 'b', 2, cache.mark())
    assert.isTrue(local.healthy)
    await local.invalidateUser(1)
    assert.deepEqual([cache.get('a') ?? null, cache.get('b') ?? null], [null, 'b'])
    await local.invalidateAll()
    assert.equal(cache.size, 0)

    const none = new NoInvalidationBus<string>()
    assert.isNull(none.cache)
    assert.isFalse(none.healthy)
  })
})

test.group('invalidation: the bus over Redis (two connections, as two instances)', (group) => {
  const connections: RedisConnection[] = []
  const buses: RedisInvalidationBus<string>[] = []
  let name = ''
  group.each.setup(() => {
    name = `${process.env.REDIS_PREFIX ?? 'quire:'}unit-invalidation-${Date.now()}-${Math.random()}`
  })
  group.each.teardown(async () => {
    for (const bus of buses.splice(0)) await bus.stop()
    await Promise.all(connections.splice(0).map((connection) => connection.quit()))
  })

  /** A Redis connection of its own, as another instance would have (its own subscriber too). */
  const connect = () => {
    const connection = new RedisConnection(
      `invalidation-${connections.length}`,
      redisConfig.connections.main
    )
    connections.push(connection)
    return connection
  }

  /** One instance on this test's channels: its connection, its bus, started. */
  async function instance(
    cache: UserKeyedCache<string> | null,
    { ackTimeoutMs = 1000, quiet = false } = {}
  ) {
    const appLogger = await app.container.make('logger')
    // quiet: a warning the test expects is kept out of its output.
    const logger = quiet ? appLogger.child({}, { level: 'error' }) : appLogger
    const connection = connect()
    const bus = new RedisInvalidationBus(connection, cache, logger, name, ackTimeoutMs)
    buses.push(bus)
    await bus.start()
    return { bus, connection }
  }

  test('invalidateUser resolves once the other instance dropped the user and acknowledged', async ({
    assert,
  }) => {
    const [cacheA, cacheB] = [newCache(), newCache()]
    const { bus: a } = await instance(cacheA)
    const { bus: b } = await instance(cacheB)
    assert.isTrue(a.healthy && b.healthy)
    for (const cache of [cacheA, cacheB]) {
      cache.set('s7', 'user 7', 7, cache.mark())
      cache.set('s8', 'user 8', 8, cache.mark())
    }
    // A read on B that began before the invalidation must not refill B afterwards.
    const readBegun = cacheB.mark()
    const started = Date.now()
    await a.invalidateUser(7)
    const took = Date.now() - started
    assert.isUndefined(cacheA.get('s7'))
    assert.isUndefined(cacheB.get('s7'), 'B dropped user 7 before A answered')
    assert.equal(cacheB.get('s8'), 'user 8')
    assert.isBelow(took, 1000, 'answered by the acknowledgements, not by the timeout')
    cacheB.set('s7', 'stale', 7, readBegun)
    assert.isUndefined(cacheB.get('s7'))

    await b.invalidateAll()
    assert.deepEqual([cacheA.size, cacheB.size], [0, 0])
    await a.stop()
    assert.isFalse(a.healthy, 'a stopped bus is not trusted')
  }).skip(!hasRedis(), 'needs Redis: set REDIS_HOST')

  test('a lost subscriber connection: not trusted, emptied, trusted again once subscribed', async ({
    assert,
  }) => {
    const cacheB = newCache()
    const { bus: a } = await instance(newCache())
    const { bus: b, connection: connectionB } = await instance(cacheB)
    const until = async (condition: () => boolean) => {
      const deadline = Date.now() + 3000
      while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
      return condition()
    }
    cacheB.set('s', 'v', 1, cacheB.mark())
    // Messages published while B is away are lost to it: it must not trust what it holds.
    connectionB.ioSubscriberConnection!.disconnect(true)
    assert.isTrue(await until(() => !b.healthy), 'unhealthy while disconnected')
    assert.equal(cacheB.size, 0)
    assert.isTrue(await until(() => b.healthy), 'healthy again once subscribed again')
    cacheB.set('s', 'v', 1, cacheB.mark())
    await a.invalidateUser(1)
    assert.isUndefined(cacheB.get('s'), 'invalidations reach it again')
  }).skip(!hasRedis(), 'needs Redis: set REDIS_HOST')

  test('a subscriber that does not acknowledge holds the invalidation until the timeout', async ({
    assert,
  }) => {
    const cache = newCache()
    await instance(cache, { ackTimeoutMs: 300 })
    // A publish-only instance (an ace command): no cache, its invalidations still wait.
    const { bus: publisher } = await instance(null, { ackTimeoutMs: 300, quiet: true })
    assert.isFalse(publisher.healthy)
    cache.set('s', 'v', 1, cache.mark())
    let started = Date.now()
    await publisher.invalidateUser(1)
    assert.isBelow(Date.now() - started, 300)
    assert.isUndefined(cache.get('s'))

    // A receiver that never answers: PUBLISH counts it, so the invalidation waits for it.
    const silent = connect()
    await new Promise<void>((resolve, reject) =>
      silent.subscribe(`${name}:changed`, () => {}, {
        onSubscription: () => resolve(),
        onError: reject,
      })
    )
    started = Date.now()
    await publisher.invalidateUser(1)
    assert.isAtLeast(Date.now() - started, 290)
  }).skip(!hasRedis(), 'needs Redis: set REDIS_HOST')
})
