import { randomUUID } from 'node:crypto'
import type { RedisConnection } from '@adonisjs/redis'
import type { Logger } from '@adonisjs/core/logger'
import type { SessionStateCache } from './session_state_cache.js'

/**
 * Carries "the sessions of user X changed" to every instance's session-state
 * cache. `invalidateUser` resolves only once every instance holding a cache
 * has dropped that user's entries, so the revoking request can answer knowing
 * the next bearer check anywhere reads the database. An abstract class so the
 * container can bind the implementation chosen at boot by this type.
 */
export abstract class RevocationBus {
  /** The session-state cache this bus keeps right; null: no cache, every check reads the database. */
  abstract readonly cache: SessionStateCache | null
  /** Whether this instance may trust its cache right now. */
  abstract readonly healthy: boolean
  abstract start(): Promise<void>
  abstract stop(): Promise<void>
  abstract invalidateUser(userId: number): Promise<void>
}

/** One process: the cache is local, invalidation is immediate. */
export class LocalRevocationBus extends RevocationBus {
  readonly healthy = true
  constructor(readonly cache: SessionStateCache) {
    super()
  }
  async start() {}
  async stop() {}
  async invalidateUser(userId: number) {
    this.cache.invalidateUser(userId)
  }
}

/** No cache at all (several instances without Redis): every check reads the database. */
export class NoRevocationBus extends RevocationBus {
  readonly cache = null
  readonly healthy = false
  async start() {}
  async stop() {}
  async invalidateUser() {}
}

interface PendingAcks {
  received: number
  expected: number | null
  resolve: () => void
}

/**
 * Several instances sharing Redis. Each instance subscribes to one
 * invalidation channel and to its own acknowledgement channel. The revoker
 * publishes; PUBLISH answers how many subscribers received the message; each
 * of them drops the user from its cache and acknowledges; the revoker waits
 * for that many acknowledgements (bounded by `ackTimeoutMs`).
 *
 * An instance whose subscriber connection is not ready may have missed
 * messages: it is unhealthy (its bearer checks read the database) and it
 * empties its cache when the connection comes back.
 */
export class RedisRevocationBus extends RevocationBus {
  private readonly instanceId = randomUUID()
  private readonly channel: string
  private readonly ackChannel: string
  private pending = new Map<string, PendingAcks>()
  private connected = false
  private stopped = false
  private watched: unknown = null
  private watchdog: NodeJS.Timeout | null = null

  constructor(
    private redis: RedisConnection,
    readonly cache: SessionStateCache,
    private logger: Logger,
    prefix: string,
    private ackTimeoutMs = 2000
  ) {
    super()
    this.channel = `${prefix}auth:revocations`
    this.ackChannel = `${prefix}auth:acks:${this.instanceId}`
  }

  get healthy() {
    return this.connected && this.redis.subscriberStatus === 'ready'
  }

  /**
   * Subscribes to both channels. Boot does not wait for Redis longer than
   * `ackTimeoutMs`: until the subscriptions are confirmed the instance is
   * unhealthy, which only means its bearer checks read the database.
   */
  async start() {
    await this.subscribeAll()
    // AdonisJS drops a subscriber connection for good once Redis stays away longer than its
    // retry strategy allows: subscribe again when that happened.
    this.watchdog = setInterval(() => {
      if (!this.stopped && !this.redis.ioSubscriberConnection) void this.subscribeAll()
    }, 5000).unref()
  }

  private async subscribeAll() {
    let missing = 2
    const subscribed = new Promise<void>((resolve) => {
      const options = {
        onSubscription: () => {
          if (--missing === 0) {
            this.connected = true
            resolve()
          }
        },
        onError: (error: unknown) =>
          this.logger.error({ err: error }, 'auth revocation: cannot subscribe'),
      }
      this.redis.subscribe(this.channel, (message) => this.onInvalidation(message), options)
      this.redis.subscribe(this.ackChannel, (message) => this.onAck(message), options)
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
    subscriber.on('close', () => {
      this.connected = false
      this.cache.clear()
    })
    subscriber.on('ready', () => {
      // Messages sent while disconnected are lost, and ioredis announces 'ready' before it has
      // subscribed again: trust the cache only once our own SUBSCRIBE is through, from empty.
      this.connected = false
      subscriber.subscribe(this.channel, this.ackChannel).then(
        () => {
          this.cache.clear()
          this.connected = !this.stopped
        },
        (error: unknown) =>
          this.logger.error({ err: error }, 'auth revocation: cannot subscribe again')
      )
    })
  }

  async stop() {
    this.stopped = true
    this.connected = false
    if (this.watchdog) clearInterval(this.watchdog)
    for (const channel of [this.channel, this.ackChannel]) {
      try {
        await this.redis.unsubscribe(channel)
      } catch {
        // The subscriber connection is already gone (shutdown order): nothing to undo.
      }
    }
  }

  async invalidateUser(userId: number) {
    this.cache.invalidateUser(userId)
    const id = randomUUID()
    const waiting = new Promise<void>((resolve) => {
      this.pending.set(id, { received: 0, expected: null, resolve })
    })
    let timer: NodeJS.Timeout | undefined
    try {
      const receivers = await this.redis.publish(
        this.channel,
        JSON.stringify({ u: userId, id, r: this.instanceId })
      )
      this.expect(id, receivers)
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.ackTimeoutMs)
      })
      if ((await Promise.race([waiting, timedOut])) === 'timeout') {
        const state = this.pending.get(id)
        this.logger.warn(
          { userId, expected: receivers, received: state?.received },
          'auth revocation: not every instance acknowledged in time; their cache entries expire with AUTH_SESSION_CACHE_TTL'
        )
      }
    } catch (error) {
      // Redis unreachable: every instance's subscriber is down too, so none trusts its cache.
      this.logger.error(
        { err: error, userId },
        'auth revocation: could not publish the invalidation'
      )
    } finally {
      clearTimeout(timer)
      this.pending.delete(id)
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
    if (typeof parsed.u === 'number') this.cache.invalidateUser(parsed.u)
    if (typeof parsed.id === 'string' && typeof parsed.r === 'string') {
      const prefix = this.ackChannel.slice(0, this.ackChannel.length - this.instanceId.length)
      this.redis.publish(`${prefix}${parsed.r}`, parsed.id).catch((error) => {
        this.logger.warn({ err: error }, 'auth revocation: could not acknowledge')
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
