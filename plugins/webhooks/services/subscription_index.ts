import db from '@adonisjs/lucid/services/db'
import webhooksConfig from '../config.js'

/**
 * Which tables and books have an active subscription, in memory, so that a
 * writer can ask `wants` synchronously (the outbox contributor's gate) and
 * skip the outbox entirely where nobody listens. Until the first load, and
 * whenever in doubt, it answers yes (entries() then reads the database in
 * the write's transaction, which is always right). Changes made by this
 * process are seen at once (reload after each change); another instance's
 * within `indexTtlMs` (the next reload after a read found it stale).
 */
export class SubscriptionIndex {
  private categories: Set<number> | null = null
  private books: Set<number> | null = null
  private loadedAt = 0
  private loading: Promise<void> | null = null

  hasCategory(categoryId: number | undefined) {
    this.refreshIfStale()
    return this.categories === null || (categoryId !== undefined && this.categories.has(categoryId))
  }

  hasBook(bookId: number | undefined) {
    this.refreshIfStale()
    return this.books === null || (bookId !== undefined && this.books.has(bookId))
  }

  private refreshIfStale() {
    if (Date.now() - this.loadedAt >= webhooksConfig.indexTtlMs && !this.loading)
      void this.reload().catch(() => {
        // The database is not ready (boot, tests migrating): answer yes until it is.
        this.categories = null
        this.books = null
      })
  }

  /** Reads the active subscriptions again (after a change here, or when stale). */
  reload(): Promise<void> {
    const run = async () => {
      const rows = await db.from('webhooks').where('active', true).select('book_id', 'category_id')
      const categories = new Set<number>()
      const books = new Set<number>()
      for (const row of rows) {
        if (row.category_id) categories.add(Number(row.category_id))
        else books.add(Number(row.book_id))
      }
      this.categories = categories
      this.books = books
      this.loadedAt = Date.now()
    }
    const loading = (this.loading ?? Promise.resolve()).then(run, run)
    this.loading = loading.finally(() => {
      if (this.loading === tracked) this.loading = null
    })
    const tracked = this.loading
    return loading
  }
}
