import db from '@adonisjs/lucid/services/db'
import webhooksConfig from '../config.js'
import type { WebhookRow } from './webhook_service.js'

/**
 * Which tables and books have an active subscription, in memory, so that a
 * writer can ask `wants` synchronously (the outbox contributor's gate) and
 * skip the outbox entirely where nobody listens. Until the first load, and
 * whenever in doubt, it answers yes (entries() then reads the database in
 * the write's transaction, which is always right). Changes made by this
 * process are seen at once (reload after each change); another instance's
 * within `indexTtlMs` (the next reload after a read found it stale).
 *
 * It also keeps the active subscriptions themselves, so a write does not
 * read them (`activeFor`); while the copy is stale or being reloaded it
 * answers null and the writer reads the database.
 */
export class SubscriptionIndex {
  private categories: Set<number> | null = null
  private books: Set<number> | null = null
  private byCategory = new Map<number, WebhookRow[]>()
  private byBook = new Map<number, WebhookRow[]>()
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

  /** The active subscriptions of a table (catId) or of a book, or null when the copy may be stale. */
  activeFor(where: { categoryId?: number; bookId?: number }): WebhookRow[] | null {
    if (this.categories === null || this.loading || this.stale()) return null
    return where.categoryId !== undefined
      ? (this.byCategory.get(where.categoryId) ?? [])
      : (this.byBook.get(where.bookId ?? 0) ?? [])
  }

  private stale() {
    return Date.now() - this.loadedAt >= webhooksConfig.indexTtlMs
  }

  private refreshIfStale() {
    if (this.stale() && !this.loading)
      void this.reload().catch(() => {
        // The database is not ready (boot, tests migrating): answer yes until it is.
        this.categories = null
        this.books = null
      })
  }

  /** Reads the active subscriptions again (after a change here, or when stale). */
  reload(): Promise<void> {
    const run = async () => {
      const rows: WebhookRow[] = await db.from('webhooks').where('active', true).orderBy('id')
      const byCategory = new Map<number, WebhookRow[]>()
      const byBook = new Map<number, WebhookRow[]>()
      const add = (map: Map<number, WebhookRow[]>, key: number, row: WebhookRow) =>
        map.set(key, [...(map.get(key) ?? []), row])
      for (const row of rows) {
        if (row.category_id) add(byCategory, Number(row.category_id), row)
        else add(byBook, Number(row.book_id), row)
      }
      this.byCategory = byCategory
      this.byBook = byBook
      this.categories = new Set(byCategory.keys())
      this.books = new Set(byBook.keys())
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
