import app from '@adonisjs/core/services/app'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import { StampService } from '#core/services/stamp_service'
import {
  MemoryStampAllocator,
  RedisStampAllocator,
  RESERVATION_BLOCK,
  type StampAllocator,
} from '#core/services/stamp_allocator'
import { hasRedis, onMysql } from '#tests/helpers/database'

const stamps = await app.container.make(StampService)

const TABLE = 'stamp_probe_rows'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Concurrent writers hold their transactions open for random times, so
 * commits happen out of stamp order. A client that syncs with "rows after my
 * stamp" and keeps the sstamp it is handed must still see every row.
 */
async function syncWhileWriting(options: {
  writers: StampService[]
  reader: StampService
  writerCount: number
  writesPerWriter: number
}) {
  const written: number[] = []
  const seen = new Set<number>()
  const handed: number[] = []
  let done = false

  const writer = async (index: number) => {
    const service = options.writers[index % options.writers.length]
    for (let write = 0; write < options.writesPerWriter; write++) {
      const id = await service.write(async ({ trx, stamp }) => {
        const [inserted] = await trx
          .table(TABLE)
          .insert({ sstamp: stamp, writer: index })
          .returning('id')
        await sleep(Math.random() * 25)
        return typeof inserted === 'object' ? inserted.id : inserted
      })
      written.push(Number(id))
    }
  }

  const client = async () => {
    let cursor = 0
    const pass = async () => {
      const sstamp = await options.reader.watermark() // taken before reading, as every read operation does
      const rows = await db.from(TABLE).where('sstamp', '>', cursor).select('id')
      for (const row of rows) seen.add(Number(row.id))
      handed.push(sstamp)
      cursor = sstamp
    }
    while (!done) {
      await pass()
      await sleep(3)
    }
    await pass()
  }

  const syncing = client()
  await Promise.all(Array.from({ length: options.writerCount }, (_, index) => writer(index)))
  done = true
  await syncing
  return { written, seen, handed }
}

test.group('stamps: a syncing client never misses a late commit', (group) => {
  group.each.setup(async () => {
    await db.connection().schema.dropTableIfExists(TABLE)
    await db.connection().schema.createTable(TABLE, (table) => {
      table.increments('id')
      table.bigInteger('sstamp').notNullable().index()
      table.integer('writer').notNullable()
    })
    return () => db.connection().schema.dropTableIfExists(TABLE)
  })

  test('16 concurrent writers, one instance', async ({ assert }) => {
    const { written, seen, handed } = await syncWhileWriting({
      writers: [stamps],
      reader: stamps,
      writerCount: 16,
      writesPerWriter: onMysql() ? 12 : 4,
    })
    assert.lengthOf(written, onMysql() ? 16 * 12 : 16 * 4)
    const missed = written.filter((id) => !seen.has(id))
    assert.deepEqual(missed, [], `the client missed ${missed.length} rows`)
    for (let index = 1; index < handed.length; index++)
      assert.isAtLeast(handed[index], handed[index - 1])
  })

  test('stamps are unique and increasing per allocation', async ({ assert }) => {
    const taken = await Promise.all(
      Array.from({ length: 50 }, () => stamps.write(async ({ stamp }) => stamp))
    )
    assert.lengthOf(new Set(taken), 50)
    const current = await stamps.watermark()
    assert.isAtLeast(current, Math.max(...taken))
    // clock-scaled: about unix seconds x 10 000
    assert.closeTo(current / 10_000, Date.now() / 1000, 3600)
  })

  test('writeStatement: a single statement is stamped and its callbacks run after it', async ({
    assert,
  }) => {
    const order: string[] = []
    const stamp = await stamps.writeStatement(async ({ client, stamp: taken, afterCommit }) => {
      assert.isFalse(client.isTransaction)
      await client.table(TABLE).insert({ sstamp: taken, writer: 7 })
      afterCommit(() => order.push('after'))
      order.push('work')
      return taken
    })
    assert.deepEqual(order, ['work', 'after'])
    const row = await db.from(TABLE).where('writer', 7).firstOrFail()
    assert.equal(Number(row.sstamp), stamp)
    assert.isAtLeast(await stamps.watermark(), stamp)
  })

  test('Redis allocator: the watermark read right after a write covers it', async ({ assert }) => {
    const { default: redis } = await import('@adonisjs/redis/services/main')
    const instance = new StampService(db, new RedisStampAllocator(db, redis.connection()), logger)
    for (let round = 0; round < 20; round++) {
      const stamp = await instance.write(async ({ stamp: taken }) => taken)
      assert.isAtLeast(await instance.watermark(), stamp)
    }
  }).skip(!(hasRedis() && onMysql()), 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)')

  test('Redis allocator: a live instance holds the watermark below its write in flight', async ({
    assert,
  }) => {
    const { default: redis } = await import('@adonisjs/redis/services/main')
    const writer = new RedisStampAllocator(db, redis.connection())
    const reader = new RedisStampAllocator(db, redis.connection())
    try {
      const stamp = await writer.acquire()
      assert.isBelow(await reader.watermark(), stamp)
      await writer.release(stamp)
      await writer.watermark() // waits for the release to reach Redis
      assert.isAtLeast(await reader.watermark(), stamp)
    } finally {
      await writer.close()
      await reader.close()
    }
  }).skip(!(hasRedis() && onMysql()), 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)')

  test('Redis allocator: a release reaches Redis with the next watermark of its turn, or alone on the next turn', async ({
    assert,
  }) => {
    const { default: redis } = await import('@adonisjs/redis/services/main')
    const writer = new RedisStampAllocator(db, redis.connection())
    const reader = new RedisStampAllocator(db, redis.connection())
    try {
      // Released, then a watermark asked in the same turn: its script removes the stamp first.
      const first = await writer.acquire()
      const second = await writer.acquire()
      await writer.release(first)
      const [own, other] = await Promise.all([writer.watermark(), reader.watermark()])
      assert.isAtLeast(own, first)
      assert.isBelow(own, second)
      assert.isAtLeast(other, first)
      // Released with no watermark asked: removed on its own soon after.
      await writer.release(second)
      let watermark = await reader.watermark()
      for (let tries = 0; watermark < second && tries < 50; tries++) {
        await sleep(10)
        watermark = await reader.watermark()
      }
      assert.isAtLeast(watermark, second)
    } finally {
      await writer.close()
      await reader.close()
    }
  }).skip(!(hasRedis() && onMysql()), 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)')

  test('Redis allocator: a crashed instance releases the watermark once its heartbeat is gone', async ({
    assert,
  }) => {
    const { default: redis } = await import('@adonisjs/redis/services/main')
    // A short TTL so the test does not wait the production 6 s.
    const crashed = new RedisStampAllocator(db, redis.connection(), {
      instanceTtlMs: 400,
      heartbeatMs: 100,
    })
    const survivor = new RedisStampAllocator(db, redis.connection())
    try {
      const stamp = await crashed.acquire()
      assert.isBelow(await survivor.watermark(), stamp)
      // A SIGKILL: the process stops beating and never releases; its set entry stays behind.
      ;(crashed as unknown as { heartbeat: NodeJS.Timeout }).heartbeat.close()
      let watermark = await survivor.watermark()
      for (let tries = 0; watermark < stamp && tries < 100; tries++) {
        await sleep(50)
        watermark = await survivor.watermark()
      }
      assert.isAtLeast(watermark, stamp)
    } finally {
      await crashed.close()
      await survivor.close()
    }
  }).skip(!(hasRedis() && onMysql()), 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)')

  test('a restarted allocator resumes close to the last stamp, not a large block ahead', async ({
    assert,
  }) => {
    const make = async (): Promise<StampAllocator> => {
      if (!hasRedis()) return new MemoryStampAllocator(db)
      const { default: redis } = await import('@adonisjs/redis/services/main')
      return new RedisStampAllocator(db, redis.connection())
    }
    const before = await make()
    const last = await before.acquire()
    await before.release(last)
    await before.close?.()
    const startedAt = Date.now()
    const restarted = await make()
    const first = await restarted.acquire()
    await restarted.release(first)
    await restarted.close?.()
    assert.isAbove(first, last)
    assert.isAtMost(first - last, RESERVATION_BLOCK + (Date.now() - startedAt + 1000) * 10)
  })

  test('two instances sharing Redis and MariaDB: readers on one see the writes of both', async ({
    assert,
  }) => {
    const { default: redis } = await import('@adonisjs/redis/services/main')
    const instanceA = new StampService(db, new RedisStampAllocator(db, redis.connection()), logger)
    const instanceB = new StampService(db, new RedisStampAllocator(db, redis.connection()), logger)
    const { written, seen } = await syncWhileWriting({
      writers: [instanceA, instanceB],
      reader: instanceB,
      writerCount: 16,
      writesPerWriter: 8,
    })
    assert.lengthOf(written, 128)
    assert.deepEqual(
      written.filter((id) => !seen.has(id)),
      []
    )
  }).skip(!(hasRedis() && onMysql()), 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)')
})
