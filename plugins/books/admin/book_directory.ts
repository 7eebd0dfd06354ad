import db from '@adonisjs/lucid/services/db'
import { readPage, whereContains, type PageRequest } from '#core/paging'
import { TABLES } from '../models/records.js'

/**
 * Read-only listings for the console: every book (not one member's view of
 * them), searched and paged in SQL, and a book's members.
 */
export class BookDirectory {
  /** Every book, newest first, searched by code, owner or title, with its member count. */
  async search(request: PageRequest) {
    const query = db
      .from(`${TABLES.books} as b`)
      .join('users as o', 'o.id', 'b.owner_id')
      .where('b.del', false)
    const found = await readPage(
      whereContains(query, request.search, ['b.code', 'o.code', 'b.owner_prefs']),
      request,
      (page) =>
        page
          .orderBy('b.id', 'desc')
          .select('b.id', 'b.code', 'b.owner_prefs', 'b.archived', 'o.code as owner'),
      (row) => ({
        id: Number(row.id),
        code: row.code as string,
        owner: row.owner as string,
        title: titleOf(row.owner_prefs) ?? (row.code as string),
        archived: Boolean(row.archived),
        members: 0,
      })
    )
    const members = await this.memberCounts(found.items.map((book) => book.id))
    for (const book of found.items) book.members = members.get(book.id) ?? 0
    return found
  }

  private async memberCounts(bookIds: number[]) {
    const counts = new Map<number, number>()
    if (!bookIds.length) return counts
    const rows = await db
      .from(TABLES.members)
      .whereIn('book_id', bookIds)
      .where('del', false)
      .groupBy('book_id')
      .select('book_id')
      .count('* as total')
    for (const row of rows) counts.set(Number(row.book_id), Number(row.total))
    return counts
  }

  async find(id: number) {
    const row = await db
      .from(`${TABLES.books} as b`)
      .join('users as o', 'o.id', 'b.owner_id')
      .where('b.id', id)
      .where('b.del', false)
      .select(
        'b.id',
        'b.code',
        'b.description',
        'b.owner_prefs',
        'b.archived',
        'b.owner_id',
        'o.code as owner',
        'b.created_at'
      )
      .first()
    if (!row) return null
    return {
      id: Number(row.id),
      code: row.code as string,
      owner: row.owner as string,
      ownerId: Number(row.owner_id),
      title: titleOf(row.owner_prefs) ?? row.code,
      description: row.description as string,
      archived: Boolean(row.archived),
      createdAt: row.created_at ? new Date(row.created_at).toISOString() : null,
    }
  }

  /** A book's members, searched by code or e-mail and paged in SQL. */
  members(bookId: number, request: PageRequest) {
    const query = db
      .from(`${TABLES.members} as m`)
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.book_id', bookId)
      .where('m.del', false)
    return readPage(
      whereContains(query, request.search, ['u.code', 'u.email']),
      request,
      (page) => page.orderBy('m.id').select('u.id', 'u.code', 'u.email', 'm.right', 'm.invite'),
      (row) => ({
        userId: Number(row.id),
        code: row.code as string,
        email: (row.email as string | null) ?? null,
        right: Number(row.right),
        invite: row.invite as string,
      })
    )
  }
}

function titleOf(prefs: unknown): string | null {
  if (typeof prefs !== 'string' || prefs === '') return null
  try {
    const parsed = JSON.parse(prefs)
    return typeof parsed?.title === 'string' && parsed.title !== '' ? parsed.title : null
  } catch {
    return null
  }
}
