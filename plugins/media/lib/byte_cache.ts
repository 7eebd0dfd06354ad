/**
 * Small stored files kept in memory, least recently used first out, within a
 * byte budget. Only for content that never changes under its key: media keys
 * are server-made and never reused (a derivative's key derives from its
 * original's random internal name), so an entry cannot go stale; it can only
 * outlive its file, and every URL checks the file's row before its bytes.
 *
 * Why: a cached thumbnail served from the disk costs a stat, an open, two
 * reads and a close on the thread pool per request; from memory it is one
 * write. The hot set of a book's thumbnails is small (a 150 px JPEG is a few
 * KB), so a modest budget holds it.
 */
export interface CachedBytes {
  bytes: Buffer
  lastModified: Date
}

export class ByteCache {
  private entries = new Map<string, CachedBytes>()
  private total = 0

  /**
   * @param budget most bytes held in all (0 turns the cache off)
   * @param largest largest single entry; bigger files are always streamed
   */
  constructor(
    readonly budget: number,
    readonly largest: number
  ) {}

  /** Whether a file of this size may be kept. */
  accepts(size: number) {
    return this.budget > 0 && size <= this.largest && size <= this.budget
  }

  get(key: string): CachedBytes | undefined {
    const entry = this.entries.get(key)
    if (entry) {
      // Map order is insertion order: re-inserting makes it the most recent.
      this.entries.delete(key)
      this.entries.set(key, entry)
    }
    return entry
  }

  set(key: string, entry: CachedBytes) {
    if (!this.accepts(entry.bytes.length)) return
    this.delete(key)
    this.entries.set(key, entry)
    this.total += entry.bytes.length
    for (const [oldest, old] of this.entries) {
      if (this.total <= this.budget) break
      this.entries.delete(oldest)
      this.total -= old.bytes.length
    }
  }

  delete(key: string) {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.total -= entry.bytes.length
  }

  /** Bytes held now (for tests and diagnostics). */
  get size() {
    return this.total
  }
}
