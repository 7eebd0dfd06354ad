import { randomUUID } from 'node:crypto'
import type { RedisConnection } from '@adonisjs/redis'
import type { Logger } from '@adonisjs/core/logger'
import type { UserKeyedCache } from './user_keyed_cache.js'

/** How long an invalidation waits for every instance to acknowledge it. */
const ACK_TIMEOUT_MS = 2_000

/**
 * Carries "user X changed" (or "everything changed") to every instance's copy of one
 * UserKeyedCache. `invalidateUser` resolves only once every instance holding that cache dropped
 * the user's entries, so a revocation answers knowing that the next read anywhere goes to the
 * database. The owner of the cache picks the variant at boot; an abstract class so that a
 * container can bind the chosen one under a key.
 */
export abstract class InvalidationBus<Value> {
  /** The cache this bus keeps right; null: no cache here, every read goes to the database. */
  abstract readonly cache: UserKeyedCache<Value> | null
  /** Whether this instance may trust its cache right now (else: read the database). */
  abstract readonly healthy: boolean
  abstract start(): Promise<void>
  abstract stop(): Promise<void>
  abstract invalidateUser(userId: number): Promise<void>
  /** `wait: false`: nobody waits for this one (a safety net), so no acknowledgement is asked. */
  abstract invalidateAll(options?: { wait?: boolean }): Promise<void>
}

/** One process (the embedded SQLite database): the cache is local, invalidation is immediate. */
export class LocalInvalidationBus<Value> extends InvalidationBus<Value> {
  readonly healthy = true
  constructor(readonly cache: UserKeyedCache<Value>) {
    super()
  }
  async start() {}
  async stop() {}
  async invalidateUser(userId: number) {
    this.cache.invalidateUser(userId)
  }
  async invalidateAll() {
    this.cache.clear()
  }
}

/** No cache at all (several instances that cannot tell each other): every read is a database read. */
export class NoInvalidationBus<Value> extends InvalidationBus<Value> {
  readonly cache = null
  readonly healthy = false
  async start() {}
  async stop() {}
  async invalidateUser() {}
  async invalidateAll() {}
}

interface PendingAcks {
  received: number
  expected: number | null
  resolve: () => void
}

/**
 * Several instances sharing Redis. Each subscribes to the cache's invalidation channel
 * (`<name>:changed`) and to its own acknowledgement channel (`<name>:acks:<instance>`). The
 * invalidator publishes; PUBLISH answers how many subscribers received the message; each of
 * them empties what the message names and acknowledges; the invalidator waits for that many
 * acknowledgements (at most ackTimeoutMs, then it logs and the TTL is the safety net).
 *
 * Each cache has a bus and a channel of its own rather than one channel for all: PUBLISH then
 * counts exactly the instances that hold that cache (a process without the auth service is no
 * receiver of its revocations), and the "everything changed" that follows every write to the
 * api.php session tables does not empty the auth service's cache, which holds none of them.
 *
 * `cache` is null in processes that do not serve requests (ace commands): they only publish,
 * and subscribe only to their acknowledgements. An instance whose subscriber connection is not
 * ready may have missed messages: it is not healthy (its reads go to the database) and it
 * empties its cache when the connection is back and subscribed again.
 */
export class RedisInvalidationBus<Value> extends InvalidationBus<Value> {
  private readonly instanceId = randomUUID()
  private readonly channel: string
  private readonly ackChannelPrefix: string
  private readonly ackChannel: string
  private pending = new Map<string, PendingAcks>()
  private connected = false
  private stopped = false
  private watched: unknown = null
  private watchdog: NodeJS.Timeout | null = null

  /** `name`: the channels' common prefix, REDIS_PREFIX included (e.g. `quire:api-sessions`). */
  constructor(
    private redis: RedisConnection,
    readonly cache: UserKeyedCache<Value> | null,
    private logger: Logger,
    name: string,
    private ackTimeoutMs = ACK_TIMEOUT_MS
  ) {
    super()
    this.channel = `${name}:changed`
    this.ackChannelPrefix = `${name}:acks:`
    this.ackChannel = `${this.ackChannelPrefix}${this.instanceId}`
  }

  get healthy() {
    return (
      this.cache !== null &&
      this.connected &&
      !this.stopped &&
      this.redis.subscriberStatus === 'ready'
    )
  }

  /**
   * Subscribes. Does not wait for Redis longer than the acknowledgement timeout: until the
   * subscriptions are confirmed the instance is not healthy, which only means it reads the
   * database.
   */
  async start() {
    await this.subscribeAll()
    // AdonisJS drops a subscriber connection for good once Redis stays away longer than its
    // retry strategy allows: subscribe again when that happened.
    this.watchdog = setInterval(() => {
      if (!this.stopped && !this.redis.ioSubscriberConnection) void this.subscribeAll()
    }, 5000).unref()
  }

  private channels() {
    return this.cache ? [this.channel, this.ackChannel] : [this.ackChannel]
  }

  private async subscribeAll() {
    const channels = this.channels()
    let missing = channels.length
    const subscribed = new Promise<void>((resolve) => {
      const options = {
        onSubscription: () => {
          if (--missing === 0) {
            this.cache?.clear()
            this.connected = true
            resolve()
          }
        },
        onError: (error: unknown) =>
          this.logger.error(
            { err: error, channel: this.channel },
            'invalidation bus: cannot subscribe'
          ),
      }
      for (const channel of channels) {
        this.redis.subscribe(
          channel,
          (message) =>
            channel === this.channel ? this.onInvalidation(message) : this.onAck(message),
          options
        )
      }
    })
    this.watch(this.redis.ioSubscriberConnection)
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.ackTimeoutMs)
    })
    await Promise.race([subscribed, waited])
    clearTimeout(timer)
  }

  private watch(subscriber: RedisConnection['ioSubscriberConnection']) {
    if (!subscriber || subscriber === this.watched) return
    this.watched = subscriber
    let lost = false
    subscriber.on('close', () => {
      lost = true
      this.connected = false
      this.cache?.clear()
    })
    subscriber.on('ready', () => {
      // The first 'ready' is the first connection: subscribeAll's SUBSCRIBE is on its way.
      if (!lost) return
      lost = false
      // Messages sent while disconnected are lost, and ioredis announces 'ready' before it has
      // subscribed again: trust the cache only once our own SUBSCRIBE is through, from empty.
      this.connected = false
      subscriber.subscribe(...this.channels()).then(
        () => {
          this.cache?.clear()
          this.connected = !this.stopped
        },
        (error: unknown) =>
          this.logger.error(
            { err: error, channel: this.channel },
            'invalidation bus: cannot subscribe again'
          )
      )
    })
  }

  async stop() {
    this.stopped = true
    this.connected = false
    this.cache?.clear()
    if (this.watchdog) clearInterval(this.watchdog)
    for (const channel of this.channels()) {
      try {
        await this.redis.unsubscribe(channel)
      } catch {
        // The subscriber connection is already gone (shutdown order): nothing to undo.
      }
    }
  }

  async invalidateUser(userId: number) {
    this.cache?.invalidateUser(userId)
    await this.publish(userId, true)
  }

  async invalidateAll({ wait = true }: { wait?: boolean } = {}) {
    this.cache?.clear()
    await this.publish(null, wait)
  }

  /** Tells every instance (this one is done already); with `wait`, until all acknowledged. */
  private async publish(userId: number | null, wait: boolean) {
    const id = wait ? randomUUID() : undefined
    const waiting = id
      ? new Promise<void>((resolve) => {
          this.pending.set(id, { received: 0, expected: null, resolve })
        })
      : null
    let timer: NodeJS.Timeout | undefined
    try {
      const receivers = await this.redis.publish(
        this.channel,
        JSON.stringify({ u: userId, id, r: this.instanceId })
      )
      if (!id || !waiting) return
      this.expect(id, receivers)
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.ackTimeoutMs)
      })
      if ((await Promise.race([waiting, timedOut])) === 'timeout') {
        const state = this.pending.get(id)
        this.logger.warn(
          { channel: this.channel, userId, expected: receivers, received: state?.received },
          'invalidation bus: not every instance acknowledged in time; their entries expire with the cache TTL'
        )
      }
    } catch (error) {
      // Redis unreachable: every instance's subscriber is down too, so none trusts its cache.
      this.logger.error(
        { err: error, channel: this.channel, userId },
        'invalidation bus: could not publish an invalidation'
      )
    } finally {
      clearTimeout(timer)
      if (id) this.pending.delete(id)
    }
  }

  private expect(id: string, receivers: number) {
    const state = this.pending.get(id)
    if (!state) return
    state.expected = receivers
    if (state.received >= receivers) state.resolve()
  }

  private onInvalidation(message: string) {
    let parsed: { u?: unknown; id?: unknown; r?: unknown }
    try {
      parsed = JSON.parse(message)
    } catch {
      return
    }
    if (typeof parsed.u === 'number') this.cache?.invalidateUser(parsed.u)
    else this.cache?.clear()
    if (typeof parsed.id === 'string' && typeof parsed.r === 'string') {
      this.redis.publish(`${this.ackChannelPrefix}${parsed.r}`, parsed.id).catch((error) => {
        this.logger.warn(
          { err: error, channel: this.channel },
          'invalidation bus: could not acknowledge'
        )
      })
    }
  }

  private onAck(id: string) {
    const state = this.pending.get(id)
    if (!state) return
    state.received++
    if (state.expected !== null && state.received >= state.expected) state.resolve()
  }
}
