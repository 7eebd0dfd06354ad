import { randomUUID } from 'node:crypto'
import type { RedisConnection } from '@adonisjs/redis'
import type { Logger } from '@adonisjs/core/logger'

type Row = Record<string, unknown>

/**
 * How long a cached session (and its user) is trusted without being read again: a safety net
 * only. Every change of a session or of its user reaches every instance's cache through the bus
 * below long before that; the TTL bounds the damage of an invalidation that got lost (a write
 * outside knex that forgot to invalidate, a Redis hiccup between publish and delivery).
 */
export const API_SESSION_CACHE_TTL_MS = 5_000
/** Past this many entries the cache starts over (it is only ever a shortcut to the database). */
const MAX_ENTRIES = 50_000
/** How long a revocation waits for every instance to acknowledge that it dropped the user. */
const ACK_TIMEOUT_MS = 2_000

interface Entry {
  /** The joined session + user row, as the database answered it (never modified). */
  row: Row
  userId: number
  cachedAt: number
}

/**
 * In-process memory of "the session behind this sesskey digest, and its user": on MariaDB the
 * session read is a round trip on every api.php request and socket frame (sendMsg's only one
 * outside its group-committed batch). SQLite needs none of this: readCached keeps that read
 * until a commit writes api_sessions or users (data_version and the tables' epochs).
 *
 * It is correct only while every change of a session or a user reaches it: the bus drops a
 * user's entries on every instance (a revocation waits for their acknowledgements before it
 * answers), and every knex write to `users` or `api_sessions` empties every instance's cache
 * once its transaction is over (watchWrites). A read that began before an invalidation does
 * not refill the cache with what it saw: fills carry the mark taken when the read began.
 */
export class ApiSessionCache {
  private entries = new Map<string, Entry>()
  private byUser = new Map<number, Set<string>>()
  private sequence = 0
  private userInvalidatedAt = new Map<number, number>()
  private allInvalidatedAt = 0

  constructor(private ttlMs = API_SESSION_CACHE_TTL_MS) {}

  get size() {
    return this.entries.size
  }

  get(digest: string, now = Date.now()): Row | undefined {
    const entry = this.entries.get(digest)
    if (!entry) return undefined
    if (now - entry.cachedAt > this.ttlMs) {
      this.forget(digest)
      return undefined
    }
    return entry.row
  }

  /** Take before reading the database; pass to set(). */
  mark(): number {
    return ++this.sequence
  }

  set(digest: string, row: Row, userId: number, mark: number, now = Date.now()) {
    if (this.allInvalidatedAt >= mark) return
    if ((this.userInvalidatedAt.get(userId) ?? 0) >= mark) return
    if (this.entries.size >= MAX_ENTRIES) this.clear()
    this.entries.set(digest, { row, userId, cachedAt: now })
    let digests = this.byUser.get(userId)
    if (!digests) this.byUser.set(userId, (digests = new Set()))
    digests.add(digest)
  }

  /** Drops one sesskey's entry (this process only: its own touch of the session). */
  forget(digest: string) {
    const entry = this.entries.get(digest)
    if (!entry) return
    this.entries.delete(digest)
    this.byUser.get(entry.userId)?.delete(digest)
  }

  invalidateUser(userId: number) {
    this.userInvalidatedAt.set(userId, ++this.sequence)
    const digests = this.byUser.get(userId)
    if (!digests) return
    for (const digest of digests) this.entries.delete(digest)
    this.byUser.delete(userId)
  }

  clear() {
    this.allInvalidatedAt = ++this.sequence
    this.entries.clear()
    this.byUser.clear()
    this.userInvalidatedAt.clear()
  }
}

interface PendingAcks {
  received: number
  expected: number | null
  resolve: () => void
}

/**
 * Carries "the sessions or the row of user X changed" (or "of every user") to every
 * instance's ApiSessionCache, through Redis: one invalidation channel, and one acknowledgement
 * channel per instance (`<REDIS_PREFIX>api-sessions:...`). The same design as the auth
 * service's RevocationBus (plugins/auth_service/services/revocation_bus.ts), for api.php's
 * sesskeys.
 *
 * `invalidate` publishes; PUBLISH answers how many subscribers received the message; each of
 * them empties what the message names and acknowledges; the publisher waits for that many
 * acknowledgements (at most ACK_TIMEOUT_MS). So when a revocation answers, the next request
 * with that sesskey reads the database on every instance.
 *
 * `cache` is null in processes that do not serve requests (ace commands): they only publish.
 * An instance whose subscriber connection is not ready may have missed messages: it is not
 * healthy (resolveSession reads the database) and it empties its cache when the connection is
 * back and subscribed again.
 */
export class ApiSessionBus {
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
    readonly cache: ApiSessionCache | null,
    private logger: Logger,
    prefix: string,
    private ackTimeoutMs = ACK_TIMEOUT_MS
  ) {
    this.channel = `${prefix}api-sessions:changed`
    this.ackChannel = `${prefix}api-sessions:acks:${this.instanceId}`
  }

  /** Whether this instance may trust its cache right now. */
  get healthy() {
    return (
      this.cache !== null &&
      this.connected &&
      !this.stopped &&
      this.redis.subscriberStatus === 'ready'
    )
  }

  /**
   * Subscribes to both channels (a cacheless process: only to its acknowledgements). Does not
   * wait for Redis longer than the acknowledgement timeout: until the subscriptions are
   * confirmed the instance is not healthy, which only means its session reads go to the database.
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
          this.logger.error({ err: error }, 'api sessions: cannot subscribe to invalidations'),
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
    subscriber.on('close', () => {
      this.connected = false
      this.cache?.clear()
    })
    subscriber.on('ready', () => {
      // Messages sent while disconnected are lost, and ioredis announces 'ready' before it has
      // subscribed again: trust the cache only once our own SUBSCRIBE is through, from empty.
      this.connected = false
      subscriber.subscribe(...this.channels()).then(
        () => {
          this.cache?.clear()
          this.connected = !this.stopped
        },
        (error: unknown) =>
          this.logger.error({ err: error }, 'api sessions: cannot subscribe again')
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

  /**
   * Drops user `userId`'s cached sessions (null: every user's) on every instance, this one
   * first. With `wait`, resolves once every subscribed instance acknowledged (or the timeout
   * passed, logged): a revocation answers only then.
   */
  async invalidate(userId: number | null, wait = true) {
    if (userId === null) this.cache?.clear()
    else this.cache?.invalidateUser(userId)
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
          { userId, expected: receivers, received: state?.received },
          'api sessions: not every instance acknowledged an invalidation in time; their entries expire within 5 s'
        )
      }
    } catch (error) {
      // Redis unreachable: every instance's subscriber is down too, so none trusts its cache.
      this.logger.error({ err: error, userId }, 'api sessions: could not publish an invalidation')
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
      const prefix = this.ackChannel.slice(0, this.ackChannel.length - this.instanceId.length)
      this.redis.publish(`${prefix}${parsed.r}`, parsed.id).catch((error) => {
        this.logger.warn({ err: error }, 'api sessions: could not acknowledge an invalidation')
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

/**
 * A write statement on `users` or `api_sessions` as knex sends it (Lucid models, query builder,
 * raw queries): an UPDATE, DELETE or REPLACE names the table right after its verb. A plain
 * INSERT is left out: a new row is no cached row (a new session, a new user).
 */
const WATCHED_WRITE =
  /^\s*(?:update(?:\s+ignore)?|delete(?:\s+ignore)?\s+from|replace(?:\s+into)?)\s+[`"]?(?:users|api_sessions)[`"]?[\s(]/i
/** An upsert (INSERT ... ON DUPLICATE KEY UPDATE) may change an existing row. */
const WATCHED_UPSERT =
  /^\s*insert(?:\s+ignore)?\s+into\s+[`"]?(?:users|api_sessions)[`"]?[\s(][\s\S]*\bon\s+duplicate\s+key\b/i

/** Whether `sql` writes a row the session cache may hold (see WATCHED_WRITE). */
export function writesSessionTables(sql: string): boolean {
  return WATCHED_WRITE.test(sql) || WATCHED_UPSERT.test(sql)
}

/** Per knex client: the connections (by knex's uid) that wrote a watched table since acquired. */
const dirtyByClient = new WeakMap<object, Set<unknown>>()
const watchedPools = new WeakSet<object>()

/**
 * The safety net under the explicit invalidations: every knex statement that writes `users` or
 * `api_sessions` marks its connection, and when that connection goes back to the pool (its
 * transaction committed or rolled back, or its autocommit statement done) `onWritten` runs:
 * every instance empties its cache. So a change of a user's row (rights, admin flag, code,
 * deletion) made by any code through knex is not answered from a cache for longer than a
 * message through Redis takes. Statements run on the driver itself (app/core/native_sql.ts)
 * are not seen: a native write to these tables must invalidate explicitly.
 */
export function watchWrites(knex: any, onWritten: () => void) {
  const client = knex?.client
  if (!client) return
  let dirty = dirtyByClient.get(client)
  if (!dirty) {
    const marked = (dirty = new Set())
    dirtyByClient.set(client, marked)
    client.on('query', (query: { sql?: string; __knexUid?: unknown }) => {
      if (typeof query.sql === 'string' && writesSessionTables(query.sql))
        marked.add(query.__knexUid)
    })
  }
  const marked = dirty
  const pool = client.pool
  if (pool && !watchedPools.has(pool) && typeof pool.on === 'function') {
    watchedPools.add(pool)
    pool.on('release', (connection: { __knexUid?: unknown }) => {
      if (marked.size > 0 && marked.delete(connection?.__knexUid)) onWritten()
    })
    // A connection destroyed instead of released (an error): its transaction rolled back, but
    // an autocommit statement may have gone through; invalidate all the same.
    pool.on('destroySuccess', (_id: unknown, connection: { __knexUid?: unknown }) => {
      if (marked.size > 0 && marked.delete(connection?.__knexUid)) onWritten()
    })
  }
}
