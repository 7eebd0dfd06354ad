import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import { containsPattern, readPage, type PageRequest } from '#core/paging'
import { quoteId, readQuery } from '#core/native_sql'
import { rowTableName } from '../lib/field_types.js'
import { MetaService } from '../services/meta_service.js'

/**
 * Read-only listings for the console: every book's tables (not one member's
 * view of them), searched and paged in SQL, with their row counts.
 */
@inject()
export class TableDirectory {
  constructor(private meta: MetaService) {}

  /**
   * Books with tables, newest first, searched by book code, owner or table
   * name; each with its tables (fields, views, rows). The page's row counts
   * are one UNION ALL statement, not a statement per table.
   */
  async search(request: PageRequest) {
    const books = db
      .from('table_forms as f')
      .join('books as b', 'b.id', 'f.book_id')
      .join('users as o', 'o.id', 'b.owner_id')
      .where('b.del', false)
    const like = containsPattern(request.search)
    if (like) {
      books.where((scope) =>
        scope
          .whereRaw('LOWER(b.code) LIKE ?', [like])
          .orWhereRaw('LOWER(o.code) LIKE ?', [like])
          .orWhereExists((sub) =>
            sub
              .from('table_categories as c')
              .whereRaw('c.form_id = f.id')
              .whereRaw('LOWER(c.name) LIKE ?', [like])
          )
      )
    }
    const forms = await readPage(
      books,
      request,
      (page) =>
        page
          .orderBy('b.id', 'desc')
          .select('f.id as form_id', 'b.id as book_id', 'b.code', 'o.code as owner'),
      (row) => ({
        formId: Number(row.form_id),
        bookId: Number(row.book_id),
        book: row.code as string,
        owner: row.owner as string,
      })
    )
    const idsByForm = await this.categoryIdsOfForms(forms.items.map((form) => form.formId))
    const rows = await this.rowCounts([...idsByForm.values()].flat())
    const items = []
    for (const { formId, ...form } of forms.items) {
      const tables = []
      for (const id of idsByForm.get(formId) ?? []) {
        const found = await this.meta.category(id)
        if (!found) continue
        tables.push({
          id,
          name: found.category.name,
          fields: found.category.fields.length,
          views: found.category.views.map((view) => view.name),
          rows: rows.get(id) ?? 0,
        })
      }
      items.push({ ...form, tables })
    }
    return { ...forms, items }
  }

  /** A table with its book and the book owner's id (the console reads it on the owner's behalf). */
  async table(catId: number) {
    const found = Number.isSafeInteger(catId) ? await this.meta.category(catId) : null
    if (!found) return null
    const book = await db
      .from('books as b')
      .join('users as o', 'o.id', 'b.owner_id')
      .where('b.id', found.form.bookId)
      .select('b.id', 'b.code', 'b.owner_id', 'o.code as owner')
      .first()
    if (!book) return null
    return {
      ...found,
      book: {
        id: Number(book.id),
        code: book.code as string,
        ownerId: Number(book.owner_id),
        owner: book.owner as string,
      },
    }
  }

  /** Rows of each table, one UNION ALL statement per UNION_CHUNK tables. */
  async rowCounts(categoryIds: number[]): Promise<Map<number, number>> {
    const counts = new Map<number, number>()
    for (const ids of chunksOf(categoryIds, UNION_CHUNK)) {
      const union = ids
        .map((id) => `SELECT ${id} AS id, COUNT(*) AS total FROM ${quoteId(rowTableName(id))}`)
        .join(' UNION ALL ')
      for (const row of await readQuery(union)) counts.set(Number(row.id), Number(row.total))
    }
    return counts
  }

  private async categoryIdsOfForms(formIds: number[]): Promise<Map<number, number[]>> {
    const byForm = new Map<number, number[]>()
    if (formIds.length === 0) return byForm
    const rows = await db
      .from('table_categories')
      .whereIn('form_id', formIds)
      .orderBy('order')
      .orderBy('id')
      .select('id', 'form_id')
    for (const row of rows) {
      const list = byForm.get(Number(row.form_id)) ?? []
      list.push(Number(row.id))
      byForm.set(Number(row.form_id), list)
    }
    return byForm
  }
}

/** Tables per UNION ALL statement: SQLite refuses more than 500 terms in one compound SELECT. */
export const UNION_CHUNK = 200

export function chunksOf<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = []
  for (let start = 0; start < items.length; start += size)
    chunks.push(items.slice(start, start + size))
  return chunks
}
