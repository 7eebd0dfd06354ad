import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import {
  BookAccessService,
  NEED_RIGHT,
  RIGHT_ADMIN,
  type BookNeed,
  type BookRef,
} from '#plugins/books/services/book_access_service'
import { MetaService, type CategoryMeta, type FormMeta } from './meta_service.js'
import { categoryOfRowId } from './schema_service.js'

/** What a caller does with a table: the books plugin's needs (NEED_RIGHT gives the right each takes). */
export type TableNeed = BookNeed

export interface TableScope {
  category: CategoryMeta
  form: FormMeta
  book: BookRef
  /** The actor's right in the book; null for an anonymous (or non-member) reader of a public table. */
  right: number | null
}

const tableNotFound = () => rpcError('NOT_FOUND', 'Table not found')

const ACCESS_TTL_MS = 1000

/**
 * Who may read and write which table. Book membership and rights come from
 * the books plugin; on top of them a table may be hidden below a right
 * (rights.select) or closed to changes by non-administrators (rights.modify,
 * locked). A public form is readable by anyone, without a session.
 */
@inject()
export class TableAccess {
  constructor(
    private meta: MetaService,
    private books: BookAccessService
  ) {}

  /**
   * Book identities and member rights are cached for ACCESS_TTL_MS: a table
   * write then costs no book queries. A right withdrawn by the books plugin
   * takes effect within that delay.
   */
  private bookCache = new Map<number, { at: number; book: BookRef | null }>()
  private rightCache = new Map<string, { at: number; right: number | null }>()

  private async cachedBook(bookId: number) {
    const hit = this.bookCache.get(bookId)
    if (hit && Date.now() - hit.at < ACCESS_TTL_MS) return hit.book
    const book = await this.books.findById(bookId)
    this.bookCache.set(bookId, { at: Date.now(), book })
    return book
  }

  private async cachedRight(userId: number, bookId: number) {
    const key = `${userId}:${bookId}`
    const hit = this.rightCache.get(key)
    if (hit && Date.now() - hit.at < ACCESS_TTL_MS) return hit.right
    const right = await this.books.rightOf(userId, bookId)
    if (this.rightCache.size > 10_000) this.rightCache.clear()
    this.rightCache.set(key, { at: Date.now(), right })
    return right
  }

  async book(bookId: number) {
    const book = await this.cachedBook(bookId)
    if (!book) throw tableNotFound()
    return book
  }

  /** Checks that `b_o`, when the client sent it, names the owner of the table's book. */
  private checkOwner(book: BookRef, b_o: unknown) {
    if (typeof b_o === 'string' && b_o.trim() !== '' && b_o.trim() !== book.b_o)
      throw tableNotFound()
  }

  async rightIn(
    actor: Actor | null,
    book: BookRef,
    need: TableNeed,
    isPublic: boolean
  ): Promise<number | null> {
    if (!actor) {
      if (need === 'read' && isPublic) return null
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: sesskey (this table is not public)')
    }
    if (need === 'read' && isPublic) {
      this.books.assertRestrictions(actor, book, 'read')
      return this.cachedRight(actor.user.id, book.id)
    }
    // Fast path (cached right): the same checks as BookAccessService.assert, which gives the error answers.
    this.books.assertRestrictions(actor, book, need)
    const right = await this.cachedRight(actor.user.id, book.id)
    if (
      right !== null &&
      right >= NEED_RIGHT[need] &&
      !(book.archived && need !== 'read' && need !== 'admin')
    )
      return right
    const asserted = await this.books.assert(actor, book, need)
    return typeof asserted === 'number'
      ? asserted
      : await this.books.rightOf(actor.user.id, book.id)
  }

  async forCategory(
    actor: Actor | null,
    categoryId: number,
    need: TableNeed,
    b_o?: unknown
  ): Promise<TableScope> {
    const found = await this.meta.category(categoryId)
    if (!found) throw tableNotFound()
    return this.forFound(actor, found, need, b_o)
  }

  /** As forCategory, for metadata the caller already holds (cached; the caller revalidates it). */
  async forFound(
    actor: Actor | null,
    found: { category: CategoryMeta; form: FormMeta },
    need: TableNeed,
    b_o?: unknown
  ): Promise<TableScope> {
    const book = await this.book(found.form.bookId)
    this.checkOwner(book, b_o)
    const right = await this.rightIn(actor, book, need, found.form.isPublic)
    const { category } = found
    if (
      right !== null &&
      right < category.rightsSelect &&
      right < RIGHT_ADMIN &&
      !found.form.isPublic
    )
      throw tableNotFound()
    if (
      (need === 'write' || need === 'delete') &&
      (right ?? 0) < RIGHT_ADMIN &&
      (!category.rightsModify || category.locked)
    ) {
      throw rpcError(
        'FORBIDDEN',
        `Table "${category.name}" is locked: only administrators may change it`
      )
    }
    return { category, form: found.form, book, right }
  }

  /** catId, else the table of fieldId, else the table of rowId (b_o is then optional). */
  async inferCategory(params: {
    catId?: unknown
    fieldId?: unknown
    rowId?: unknown
  }): Promise<number> {
    const catId = Number(String(params.catId ?? '').trim())
    if (params.catId !== undefined && String(params.catId).trim() !== '') {
      if (!Number.isSafeInteger(catId) || catId <= 0)
        throw rpcError('INVALID_PARAMETER', 'Invalid parameter catId: not an id', {
          field: 'catId',
        })
      return catId
    }
    const fieldId = String(params.fieldId ?? '').trim()
    if (/^\d+$/.test(fieldId)) {
      const found = await this.meta.categoryOfField(Number(fieldId))
      if (!found) throw rpcError('NOT_FOUND', `Field ${fieldId} not found`)
      return found
    }
    const rowId = String(params.rowId ?? '').trim()
    if (/^\d+$/.test(rowId)) return categoryOfRowId(Number(rowId))
    throw rpcError('MISSING_PARAMETER', 'Missing parameter: catId')
  }
}
