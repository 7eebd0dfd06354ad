import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import bookAccess from '#plugins/books/services/book_access'
import type { BookRef } from '#plugins/books/services/book_access_service'
import { RIGHT_ADMIN } from '#plugins/books/rights'
import { metaService, type CategoryMeta, type FormMeta } from './meta_service.js'
import { categoryOfRowId } from './schema_service.js'

export type TableNeed = 'read' | 'write' | 'delete' | 'admin'

export interface TableScope {
  category: CategoryMeta
  form: FormMeta
  book: BookRef
  /** The actor's right in the book; null for an anonymous (or non-member) reader of a public table. */
  right: number | null
}

const tableNotFound = () => rpcError('NOT_FOUND', 'Table not found')

/**
 * Who may read and write which table. Book membership and rights come from
 * the books plugin; on top of them a table may be hidden below a right
 * (rights.select) or closed to changes by non-administrators (rights.modify,
 * locked). A public form is readable by anyone, without a session.
 */
/**
 * Book identities and member rights are cached for ACCESS_TTL_MS: a table
 * write then costs no book queries. A right withdrawn by the books plugin
 * takes effect within that delay.
 */
const ACCESS_TTL_MS = 1000
const bookCache = new Map<number, { at: number; book: BookRef | null }>()
const rightCache = new Map<string, { at: number; right: number | null }>()

async function cachedBook(bookId: number) {
  const hit = bookCache.get(bookId)
  if (hit && Date.now() - hit.at < ACCESS_TTL_MS) return hit.book
  const book = await bookAccess.findById(bookId)
  bookCache.set(bookId, { at: Date.now(), book })
  return book
}

async function cachedRight(userId: number, bookId: number) {
  const key = `${userId}:${bookId}`
  const hit = rightCache.get(key)
  if (hit && Date.now() - hit.at < ACCESS_TTL_MS) return hit.right
  const right = await bookAccess.rightOf(userId, bookId)
  if (rightCache.size > 10_000) rightCache.clear()
  rightCache.set(key, { at: Date.now(), right })
  return right
}

const NEED_LEVEL: Record<TableNeed, number> = { read: 1, write: 2, delete: 3, admin: 4 }

export class TableAccess {
  async book(bookId: number) {
    const book = await cachedBook(bookId)
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
      bookAccess.assertRestrictions(actor, book, 'read')
      return cachedRight(actor.user.id, book.id)
    }
    // Fast path (cached right): the same checks as BookAccessService.assert, which gives the error answers.
    bookAccess.assertRestrictions(actor, book, need)
    const right = await cachedRight(actor.user.id, book.id)
    if (
      right !== null &&
      right >= NEED_LEVEL[need] &&
      !(book.archived && need !== 'read' && need !== 'admin')
    )
      return right
    const asserted = await bookAccess.assert(actor, book, need)
    return typeof asserted === 'number'
      ? asserted
      : await bookAccess.rightOf(actor.user.id, book.id)
  }

  async forCategory(
    actor: Actor | null,
    categoryId: number,
    need: TableNeed,
    b_o?: unknown
  ): Promise<TableScope> {
    const found = await metaService.category(categoryId)
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
      const found = await metaService.categoryOfField(Number(fieldId))
      if (!found) throw rpcError('NOT_FOUND', `Field ${fieldId} not found`)
      return found
    }
    const rowId = String(params.rowId ?? '').trim()
    if (/^\d+$/.test(rowId)) return categoryOfRowId(Number(rowId))
    throw rpcError('MISSING_PARAMETER', 'Missing parameter: catId')
  }
}

export const tableAccess = new TableAccess()
