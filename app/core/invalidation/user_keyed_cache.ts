interface Entry<Value> {
  value: Value
  userId: number
  cachedAt: number
}

export interface UserKeyedCacheOptions {
  /**
   * How long an entry is trusted without being read again: a safety net only. Every change
   * reaches the cache through its InvalidationBus long before that; the TTL bounds the damage
   * of an invalidation that got lost (a write that forgot to invalidate, a Redis hiccup).
   */
  ttlMs: number
  /** Past this many entries the cache starts over: it is only ever a shortcut to the database. */
  maxEntries: number
}

/**
 * In-process memory of rows read from the database, each belonging to one user, so that what
 * every request reads (its session) costs no round trip. It is correct only while every change
 * reaches it: the owner's InvalidationBus drops a user's entries (or all of them) on every
 * instance before the change answers.
 *
 * A database read that began before an invalidation must not refill the cache with what it saw:
 * take mark() before reading and pass it to set(), which drops the fill if the user (or
 * everything) was invalidated since.
 */
export class UserKeyedCache<Value> {
  private entries = new Map<string, Entry<Value>>()
  private keysByUser = new Map<number, Set<string>>()
  private sequence = 0
  private userInvalidatedAt = new Map<number, number>()
  private allInvalidatedAt = 0
  private readonly ttlMs: number
  private readonly maxEntries: number

  constructor(options: UserKeyedCacheOptions) {
    this.ttlMs = options.ttlMs
    this.maxEntries = options.maxEntries
  }

  get size() {
    return this.entries.size
  }

  get(key: string, now = Date.now()): Value | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (now - entry.cachedAt > this.ttlMs) {
      this.forget(key)
      return undefined
    }
    return entry.value
  }

  /** Take before reading the database; pass to set(). */
  mark(): number {
    return ++this.sequence
  }

  /** `now`: when the value was read (its TTL counts from then). */
  set(key: string, value: Value, userId: number, mark: number, now = Date.now()) {
    if (this.allInvalidatedAt >= mark) return
    if ((this.userInvalidatedAt.get(userId) ?? 0) >= mark) return
    if (this.entries.size >= this.maxEntries) this.clear()
    this.entries.set(key, { value, userId, cachedAt: now })
    let keys = this.keysByUser.get(userId)
    if (!keys) this.keysByUser.set(userId, (keys = new Set()))
    keys.add(key)
  }

  /** Drops one entry in this process only (e.g. after this process changed that row itself). */
  forget(key: string) {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.keysByUser.get(entry.userId)?.delete(key)
  }

  invalidateUser(userId: number) {
    // The marks of users without entries would pile up: past the cap, start over instead.
    if (this.userInvalidatedAt.size >= this.maxEntries) this.clear()
    this.userInvalidatedAt.set(userId, ++this.sequence)
    const keys = this.keysByUser.get(userId)
    if (!keys) return
    for (const key of keys) this.entries.delete(key)
    this.keysByUser.delete(userId)
  }

  clear() {
    this.allInvalidatedAt = ++this.sequence
    this.entries.clear()
    this.keysByUser.clear()
    // Every mark taken so far is older than allInvalidatedAt: the per-user marks say nothing more.
    this.userInvalidatedAt.clear()
  }
}
