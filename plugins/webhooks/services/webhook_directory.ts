import db from '@adonisjs/lucid/services/db'
import { readPage, whereContains, type PageRequest } from '#core/paging'

export type StateFilter = 'active' | 'disabled' | ''
export type KindFilter = 'table' | 'book' | ''

/** Narrowing of the console's list: a state, a kind, one book or one table. */
export interface DirectoryFilter {
  state: StateFilter
  kind: KindFilter
  bookId?: number
  catId?: number
}

/**
 * The console's listing of subscriptions across every book (the operations
 * list one table's or one book's): searched by URL, description, book,
 * owner or table name, narrowed by state and kind, paged in SQL. Read-only;
 * every change goes through WebhookService.
 */
export class WebhookDirectory {
  async search(request: PageRequest, filter: DirectoryFilter) {
    const query = db
      .from('webhooks as w')
      .join('books as b', 'b.id', 'w.book_id')
      .join('users as o', 'o.id', 'b.owner_id')
      .leftJoin('table_categories as c', 'c.id', 'w.category_id')
      .where('b.del', false)
    if (filter.state) query.where('w.active', filter.state === 'active')
    if (filter.kind === 'table') query.whereNotNull('w.category_id')
    if (filter.kind === 'book') query.whereNull('w.category_id')
    if (filter.bookId) query.where('w.book_id', filter.bookId)
    if (filter.catId) query.where('w.category_id', filter.catId)
    return readPage(
      whereContains(query, request.search, [
        'w.url',
        'w.description',
        'b.code',
        'o.code',
        'c.name',
      ]),
      request,
      (page) =>
        page
          .orderBy('w.id', 'desc')
          .select(
            'w.id',
            'w.url',
            'w.events',
            'w.description',
            'w.active',
            'w.disabled_reason',
            'w.consecutive_failures',
            'w.category_id',
            'w.created_at',
            'b.id as book_id',
            'b.code as book',
            'o.code as owner',
            'c.name as table_name'
          ),
      (row) => ({
        id: Number(row.id),
        url: String(row.url),
        events: String(row.events).split(',').filter(Boolean),
        description: String(row.description ?? ''),
        active: Boolean(Number(row.active)),
        disabledReason: (row.disabled_reason as string | null) ?? null,
        failures: Number(row.consecutive_failures),
        bookId: Number(row.book_id),
        book: String(row.book),
        owner: String(row.owner),
        catId: row.category_id === null ? null : Number(row.category_id),
        table: (row.table_name as string | null) ?? null,
        created: Number(row.created_at),
      })
    )
  }

  /** The book of a subscription with its owner's id: whom the console acts as for it. */
  async ownerOf(webhookId: number) {
    const row = await db
      .from('webhooks as w')
      .join('books as b', 'b.id', 'w.book_id')
      .where('w.id', webhookId)
      .where('b.del', false)
      .select('b.owner_id')
      .first()
    return row ? Number(row.owner_id) : null
  }
}
