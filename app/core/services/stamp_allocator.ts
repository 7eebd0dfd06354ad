import { createHash, randomUUID } from 'node:crypto'
import type { Database } from '@adonisjs/lucid/database'
import type { RedisConnection } from '@adonisjs/redis'

/**
 * Stamps are taken from a sequence without any lock held until commit, and the
 * allocator remembers which stamps belong to writes still in flight. Clients
 * are handed the low watermark — the highest stamp below every in-flight one —
 * so a client that asks for "changes after my stamp" can never skip a write
 * that commits late with a lower stamp.
 *
 * Stamps follow the clock (milliseconds × 10, i.e. unix seconds × 10 000, the
 * scale of the live product) and are strictly increasing. The highest stamp
 * ever handed out is reserved ahead in core_stamp_state, so a restart (or a
 * flushed Redis) never reuses one, even if the clock went back. The block
 * reserved at a time is small (RESERVATION_BLOCK, 10 s of clock): a restart
 * without Redis resumes from the reservation, at most that far ahead of the
 * clock (usually not at all: a restart takes longer); with Redis the counter
 * itself is the floor and the reservation only matters after Redis lost it.
 */
export interface StampAllocator {
  /** Takes a new stamp and marks it in flight. */
  acquire(): Promise<number>
  /** The write holding `stamp` has committed or rolled back. */
  release(stamp: number): Promise<void>
  /** Highest stamp such that every write with a stamp at or below it has finished. */
  watermark(): Promise<number>
  /**
   * watermark() where it is known without waiting (in memory, once loaded), else null: lets a
   * read skip a promise (getUserInfo asks on every call). Optional.
   */
  watermarkNow?(): number | null
  /**
   * watermark(), then acquire(), in one round trip where the allocator can (Redis): for a writer
   * that knows its next write is waiting (a group commit with sends queued). Optional. The stamp
   * is null when it could not be reserved (the watermark stands); a stamp it answers must be
   * written with or released, as acquire's.
   */
  watermarkAndAcquire?(): Promise<{ watermark: number; stamp: number | null }>
  /** Stops background work (a heartbeat) at shutdown. */
  close?(): Promise<void>
}

/** Stamps reserved per database round trip: 10 s of clock-driven stamps (one UPDATE per 10 s). */
export const RESERVATION_BLOCK = 100_000
/**
 * An instance that has not renewed its heartbeat for this long is dead: its
 * in-flight stamps are dropped by the next watermark, so a crashed instance
 * holds the stamps handed to clients back for seconds, not minutes.
 */
export const INSTANCE_TTL_MS = 6_000
const HEARTBEAT_MS = 1_000
/**
 * A last resort for a live instance: an in-flight stamp older than this is
 * ignored even though its instance still beats (a release lost on the way).
 */
export const IN_FLIGHT_LEASE_MS = 5 * 60_000

const clockFloor = () => Date.now() * 10

/** Keeps the persisted reservation ahead of every stamp handed out. */
class Reservation {
  private reservedUntil = 0
  private pending: Promise<void> | null = null

  constructor(private db: Database) {}

  async load(): Promise<number> {
    const row = await this.db.from('core_stamp_state').where('id', 1).first()
    this.reservedUntil = Number(row?.reserved_until ?? 0)
    return this.reservedUntil
  }

  async cover(stamp: number) {
    while (stamp > this.reservedUntil) {
      if (!this.pending) {
        const target = stamp + RESERVATION_BLOCK
        this.pending = this.db
          .from('core_stamp_state')
          .where('id', 1)
          .where('reserved_until', '<', target)
          .update({ reserved_until: target })
          .then(() => {
            this.reservedUntil = Math.max(this.reservedUntil, target)
          })
          .finally(() => {
            this.pending = null
          })
      }
      await this.pending
    }
  }
}

/** One process: the sequence and the in-flight set live in memory. */
export class MemoryStampAllocator implements StampAllocator {
  private last = 0
  private inFlight = new Set<number>()
  private reservation: Reservation
  private ready: Promise<void> | null = null
  private loaded = false

  constructor(db: Database) {
    this.reservation = new Reservation(db)
  }

  private init() {
    this.ready ??= this.reservation.load().then((reserved) => {
      this.last = Math.max(this.last, reserved)
      this.loaded = true
    })
    return this.ready
  }

  async acquire() {
    await this.init()
    const stamp = Math.max(this.last + 1, clockFloor())
    this.last = stamp
    this.inFlight.add(stamp)
    try {
      await this.reservation.cover(stamp)
    } catch (error) {
      this.inFlight.delete(stamp)
      throw error
    }
    return stamp
  }

  async release(stamp: number) {
    this.inFlight.delete(stamp)
  }

  async watermark() {
    await this.init()
    return this.watermarkNow()!
  }

  watermarkNow(): number | null {
    if (!this.loaded) return null
    let lowest = Number.POSITIVE_INFINITY
    for (const stamp of this.inFlight) if (stamp < lowest) lowest = stamp
    return lowest === Number.POSITIVE_INFINITY ? this.last : lowest - 1
  }
}

/** Redis's own clock in milliseconds: every instance compares expiries on one clock. */
const REDIS_NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`

/** The acquisition itself (ACQUIRE_SCRIPT's and WATERMARK_AND_ACQUIRE_SCRIPT's): sets `member`. */
const ACQUIRE_STEP = `local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if current == 0 then floor = math.max(floor, tonumber(ARGV[2])) end
local stamp = math.max(current + 1, floor)
local text = string.format('%d', stamp)
redis.call('SET', KEYS[1], text)
redis.call('ZADD', KEYS[3], 'GT', now + tonumber(ARGV[5]), ARGV[3])
local member = text .. ':' .. ARGV[3] .. ':' .. string.format('%d', now + tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], stamp, member)
`
/**
 * KEYS: counter, in-flight set, instances. ARGV: clock floor, reserved floor
 * (used only when the counter is gone: a restarted Redis), instance, lease and
 * instance TTL (ms). The member names its instance and its lease expiry.
 */
const ACQUIRE_SCRIPT = `${REDIS_NOW}
${ACQUIRE_STEP}return member
`

/** KEYS: instances. ARGV: instance, TTL (ms). */
const HEARTBEAT_SCRIPT = `${REDIS_NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
return now
`

/**
 * A Lua function: drops in-flight stamps of dead instances (no heartbeat within their TTL) and
 * past their lease, then answers the stamp below the lowest one left (or the counter).
 */
const LOWEST_WATERMARK = `local function lowest_watermark()
  while true do
    local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    if #first == 0 then
      return redis.call('GET', KEYS[1]) or '0'
    end
    local instance, expires = string.match(first[1], '^%d+:(.+):(%d+)$')
    local alive = instance and tonumber(redis.call('ZSCORE', KEYS[3], instance) or '0') >= now
    if not alive or tonumber(expires) < now then
      redis.call('ZREM', KEYS[2], first[1])
    else
      return string.format('%d', tonumber(first[2]) - 1)
    end
  end
end
`
/**
 * KEYS: counter, in-flight set, instances. ARGV: in-flight members released by this instance
 * and not removed yet (removed first). Answers lowest_watermark().
 */
const WATERMARK_SCRIPT = `${REDIS_NOW}
${LOWEST_WATERMARK}for i = 1, #ARGV do
  redis.call('ZREM', KEYS[2], ARGV[i])
end
return lowest_watermark()
`

/**
 * WATERMARK_SCRIPT, then ACQUIRE_SCRIPT, in one call. KEYS: counter, in-flight set, instances.
 * ARGV: ACQUIRE_SCRIPT's five, then the members to remove. Answers {watermark, member}.
 */
const WATERMARK_AND_ACQUIRE_SCRIPT = `${REDIS_NOW}
${LOWEST_WATERMARK}for i = 6, #ARGV do
  redis.call('ZREM', KEYS[2], ARGV[i])
end
local watermark = lowest_watermark()
${ACQUIRE_STEP}return {watermark, member}
`

/** A Lua script run by its SHA-1 (EVALSHA): its text is sent only when Redis does not know it yet. */
class RedisScript {
  private sha: string
  constructor(private source: string) {
    this.sha = createHash('sha1').update(source).digest('hex')
  }

  async run(redis: RedisConnection, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
      return redis.eval(this.source, keys.length, ...keys, ...args)
    }
  }
}

const acquireScript = new RedisScript(ACQUIRE_SCRIPT)
const heartbeatScript = new RedisScript(HEARTBEAT_SCRIPT)
const watermarkScript = new RedisScript(WATERMARK_SCRIPT)
const watermarkAndAcquireScript = new RedisScript(WATERMARK_AND_ACQUIRE_SCRIPT)

/**
 * Several instances: the sequence is a Redis counter and the in-flight set a
 * sorted set, both updated atomically by Lua scripts. Each instance renews a
 * heartbeat; the in-flight stamps of an instance that stopped beating (a
 * crash, a SIGKILL) are dropped within INSTANCE_TTL_MS, so they cannot hold
 * the watermark back.
 */
export class RedisStampAllocator implements StampAllocator {
  /** This process's name in the instances set and in its in-flight members. */
  readonly instanceId = randomUUID().slice(0, 13)
  private reservation: Reservation
  private floor = 0
  private ready: Promise<void> | null = null
  private heartbeat: NodeJS.Timeout | null = null
  /** stamp -> sorted-set member, to release exactly what was added. */
  private members = new Map<number, string>()
  /** ZREMs of released stamps that Redis has not answered yet. */
  private releasing = new Set<Promise<void>>()
  /** Members released in this turn of the event loop, not sent to Redis yet (see release). */
  private released: string[] = []
  private releaseScheduled = false

  private keys = {
    counter: 'stamps:counter',
    inFlight: 'stamps:inflight',
    instances: 'stamps:instances',
  }
  private instanceTtlMs: number
  private heartbeatMs: number

  constructor(
    db: Database,
    private redis: RedisConnection,
    options: { instanceTtlMs?: number; heartbeatMs?: number } = {}
  ) {
    this.reservation = new Reservation(db)
    this.instanceTtlMs = options.instanceTtlMs ?? INSTANCE_TTL_MS
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
  }

  private init() {
    this.ready ??= (async () => {
      this.floor = await this.reservation.load()
      await this.beat()
      this.heartbeat = setInterval(() => void this.beat().catch(() => {}), this.heartbeatMs)
      this.heartbeat.unref?.()
    })()
    return this.ready
  }

  private async beat() {
    await heartbeatScript.run(
      this.redis,
      [this.keys.instances],
      [this.instanceId, String(this.instanceTtlMs)]
    )
  }

  /** Stops the heartbeat and leaves the instances set (a clean shutdown). */
  async close() {
    if (this.heartbeat) clearInterval(this.heartbeat)
    this.heartbeat = null
    this.sendReleased()
    if (this.releasing.size) await Promise.all(this.releasing)
    if (this.ready) await this.redis.zrem(this.keys.instances, this.instanceId).catch(() => {})
  }

  private acquireArguments() {
    return [
      String(clockFloor()),
      String(this.floor),
      this.instanceId,
      String(IN_FLIGHT_LEASE_MS),
      String(this.instanceTtlMs),
    ]
  }

  async acquire() {
    await this.init()
    const member = (await acquireScript.run(
      this.redis,
      [this.keys.counter, this.keys.inFlight, this.keys.instances],
      this.acquireArguments()
    )) as string
    return this.acquired(member)
  }

  /** Records an in-flight member the acquire script answered; its stamp once reserved. */
  private async acquired(member: string) {
    const stamp = Number(member.slice(0, member.indexOf(':')))
    this.members.set(stamp, member)
    try {
      await this.reservation.cover(stamp)
    } catch (error) {
      await this.release(stamp)
      throw error
    }
    return stamp
  }

  /**
   * The write's answer does not wait for the ZREM (a round trip, about a tenth
   * of a one-cell write): until Redis has it, the stamp only holds watermarks
   * back, so a client may re-read a change it has, never miss one. This
   * instance's own watermark waits for its ZREMs in flight, so a client that
   * reads after its write was answered is given a stamp at or above it. A ZREM
   * that fails leaves the member to expire with its lease.
   *
   * The ZREM is not sent at once: a watermark asked in the same turn of the
   * event loop (a group-committed batch of sends asks one right after its
   * commit) removes the member in its own script, one round trip instead of
   * two; otherwise the members released in the turn go in one ZREM on the next.
   */
  async release(stamp: number) {
    const member = this.members.get(stamp)
    if (!member) return
    this.members.delete(stamp)
    this.releaseMember(member)
  }

  private releaseMember(member: string) {
    this.released.push(member)
    if (this.releaseScheduled) return
    this.releaseScheduled = true
    setImmediate(() => this.sendReleased())
  }

  /** One ZREM of the members released and not yet sent with a watermark. */
  private sendReleased() {
    this.releaseScheduled = false
    const members = this.takeReleased()
    if (members.length === 0) return
    const settled = () => {
      this.releasing.delete(pending)
    }
    const pending: Promise<void> = this.redis
      .zrem(this.keys.inFlight, ...members)
      .then(settled, settled)
    this.releasing.add(pending)
  }

  private takeReleased() {
    const members = this.released
    if (members.length) this.released = []
    return members
  }

  async watermark() {
    await this.init()
    if (this.releasing.size) await Promise.all(this.releasing)
    // Taken and sent in one synchronous step: a watermark asked later by this instance is sent
    // after this script on the same connection, so Redis has removed these members before it.
    const members = this.takeReleased()
    let value: string
    try {
      value = (await watermarkScript.run(
        this.redis,
        [this.keys.counter, this.keys.inFlight, this.keys.instances],
        members
      )) as string
    } catch (error) {
      // Not removed: released again by the next ZREM (or watermark).
      for (const member of members) this.releaseMember(member)
      throw error
    }
    return Math.max(Number(value), 0)
  }

  /**
   * watermark() and acquire() in one script: the watermark is computed first (the new stamp,
   * above every stamp handed out, is not in flight yet), with this turn's releases removed.
   */
  async watermarkAndAcquire() {
    await this.init()
    if (this.releasing.size) await Promise.all(this.releasing)
    const members = this.takeReleased()
    let answer: [string, string]
    try {
      answer = (await watermarkAndAcquireScript.run(
        this.redis,
        [this.keys.counter, this.keys.inFlight, this.keys.instances],
        [...this.acquireArguments(), ...members]
      )) as [string, string]
    } catch (error) {
      for (const member of members) this.releaseMember(member)
      throw error
    }
    const watermark = Math.max(Number(answer[0]), 0)
    // A stamp whose reservation failed is released: the watermark stands, the next write acquires.
    const stamp = await this.acquired(answer[1]).catch(() => null)
    return { watermark, stamp }
  }
}
