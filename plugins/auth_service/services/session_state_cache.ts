export interface CachedSessionState {
  userId: number
  active: boolean
  cachedAt: number
}

/** Past this many entries the cache starts over (it is only ever a shortcut to the database). */
const MAX_ENTRIES = 200_000

/**
 * In-process memory of "is auth session X still active", so a bearer check
 * costs no database round trip. It is correct only while every revocation
 * reaches it before the revoking request answers: the revocation bus drops a
 * user's entries on every instance (and waits for their acknowledgement)
 * before revoke-others, logout or a refresh-reuse answer.
 *
 * A database read that started before an invalidation must not refill the
 * cache with what it saw: fills carry the sequence number taken when the read
 * began and are dropped if the user (or everything) was invalidated since.
 */
export class SessionStateCache {
  private entries = new Map<string, CachedSessionState>()
  private byUser = new Map<number, Set<string>>()
  private sequence = 0
  private userInvalidatedAt = new Map<number, number>()
  private allInvalidatedAt = 0

  constructor(private ttlMs: number) {}

  get size() {
    return this.entries.size
  }

  get(sessionId: string, now: number): CachedSessionState | undefined {
    const entry = this.entries.get(sessionId)
    if (!entry) return undefined
    if (now - entry.cachedAt > this.ttlMs) {
      this.forget(sessionId, entry.userId)
      return undefined
    }
    return entry
  }

  /** Take before reading the database; pass to set(). */
  mark(): number {
    return ++this.sequence
  }

  set(sessionId: string, state: CachedSessionState, mark: number) {
    if (this.allInvalidatedAt >= mark) return
    if ((this.userInvalidatedAt.get(state.userId) ?? 0) >= mark) return
    if (this.entries.size >= MAX_ENTRIES) this.clear()
    this.entries.set(sessionId, state)
    let sessions = this.byUser.get(state.userId)
    if (!sessions) this.byUser.set(state.userId, (sessions = new Set()))
    sessions.add(sessionId)
  }

  invalidateUser(userId: number) {
    this.userInvalidatedAt.set(userId, ++this.sequence)
    const sessions = this.byUser.get(userId)
    if (!sessions) return
    for (const sessionId of sessions) this.entries.delete(sessionId)
    this.byUser.delete(userId)
  }

  clear() {
    this.allInvalidatedAt = ++this.sequence
    this.entries.clear()
    this.byUser.clear()
    this.userInvalidatedAt.clear()
  }

  private forget(sessionId: string, userId: number) {
    this.entries.delete(sessionId)
    this.byUser.get(userId)?.delete(sessionId)
  }
}
