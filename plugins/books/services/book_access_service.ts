import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { NEED_RIGHT, RIGHT_NAMES, type BookNeed } from '../rights.js'

export type { BookNeed } from '../rights.js'

/** A book as other plugins see it: its wire identity (b_o, b_c), owner and state. */
export interface BookRef {
  id: number
  /** The owner's user code. */
  b_o: string
  /** The book code, unique per owner. */
  b_c: string
  ownerId: number
  archived: boolean
}

interface BookRow {
  id: number
  code: string
  owner_id: number
  owner_code: string
  archived: number | boolean
}

const toRef = (row: BookRow): BookRef => ({
  id: Number(row.id),
  b_o: row.owner_code,
  b_c: row.code,
  ownerId: Number(row.owner_id),
  archived: Boolean(row.archived),
})

/**
 * Who may see and do what in a book. This is the books plugin's public
 * surface for other plugins (tables, realtime, media): they never read the
 * books tables themselves.
 *
 * A user who is not an accepted member gets NOT_FOUND, exactly as for a book
 * that does not exist, so that probing codes reveals nothing.
 */
export class BookAccessService {
  private baseQuery() {
    return db
      .from('books')
      .join('users', 'users.id', 'books.owner_id')
      .where('books.del', false)
      .select(
        'books.id',
        'books.code',
        'books.owner_id',
        'books.archived',
        'users.code as owner_code'
      )
  }

  /** The live (not deleted) book `b_c` of the user whose code is `b_o`. */
  async resolve(b_o: string, b_c: string): Promise<BookRef | null> {
    const owner = String(b_o ?? '').trim()
    const code = String(b_c ?? '').trim()
    if (owner === '' || code === '') return null
    const row = await this.baseQuery().where('users.code', owner).where('books.code', code).first()
    return row ? toRef(row) : null
  }

  async findById(id: number): Promise<BookRef | null> {
    const row = await this.baseQuery().where('books.id', id).first()
    return row ? toRef(row) : null
  }

  /** The right of an accepted member; null when the user is not (or no longer) an accepted member. */
  async rightOf(userId: number, bookId: number): Promise<number | null> {
    const row = await db
      .from('book_members')
      .where('book_id', bookId)
      .where('user_id', userId)
      .where('invite', 'accepted')
      .where('del', false)
      .select('right')
      .first()
    return row ? Number(row.right) : null
  }

  /** Throws unless the session may use this book and the actor's right covers `need`. */
  async assert(actor: Actor, book: BookRef, need: BookNeed): Promise<number> {
    this.assertRestrictions(actor, book, need)
    return this.check(actor, book, need, await this.rightOf(actor.user.id, book.id))
  }

  private check(actor: Actor, book: BookRef, need: BookNeed, right: number | null): number {
    this.assertRestrictions(actor, book, need)
    if (right === null) throw notFound()
    if (book.archived && (need === 'write' || need === 'delete')) {
      throw rpcError('FORBIDDEN', 'The book is archived: unarchive it before changing it')
    }
    if (right < NEED_RIGHT[need]) {
      throw rpcError(
        'FORBIDDEN',
        `Your right in this book (${right}) does not allow this: ${RIGHT_NAMES[NEED_RIGHT[need]]} or more is needed`
      )
    }
    return right
  }

  /** A restricted session (carnet_code/carnet_owner, readonly) sees only its own book, read-only if so. */
  assertRestrictions(actor: Actor, book: BookRef, need: BookNeed = 'read') {
    const restrictions = actor.restrictions
    if (restrictions.carnet_code && restrictions.carnet_code !== book.b_c) {
      throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
    }
    if (restrictions.carnet_owner && restrictions.carnet_owner !== book.b_o) {
      throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
    }
    if (restrictions.readonly && need !== 'read') {
      throw rpcError('READONLY_SESSION', 'This session is read-only')
    }
  }

  /** Whether a session restricted to one book allows this book (no restriction allows all). */
  allows(actor: Actor, book: { b_o: string; b_c: string }) {
    const restrictions = actor.restrictions
    if (restrictions.carnet_code && restrictions.carnet_code !== book.b_c) return false
    if (restrictions.carnet_owner && restrictions.carnet_owner !== book.b_o) return false
    return true
  }

  async resolveFor(actor: Actor, b_o: string, b_c: string, need: BookNeed): Promise<BookRef> {
    const owner = String(b_o ?? '').trim()
    const code = String(b_c ?? '').trim()
    // One round trip for the book and the actor's membership (the hot path of every book operation).
    const row =
      owner === '' || code === ''
        ? null
        : await this.baseQuery()
            .leftJoin('book_members as bm', (join) => {
              join
                .on('bm.book_id', '=', 'books.id')
                .andOnVal('bm.user_id', '=', actor.user.id)
                .andOnVal('bm.invite', '=', 'accepted')
                .andOnVal('bm.del', '=', false)
            })
            .select('bm.right as member_right')
            .where('users.code', owner)
            .where('books.code', code)
            .first()
    if (!row) {
      // A restricted session asking for another book learns only that it is restricted.
      if (!this.allows(actor, { b_o: owner, b_c: code })) {
        throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
      }
      throw notFound()
    }
    const book = toRef(row)
    this.check(actor, book, need, row.member_right === null ? null : Number(row.member_right))
    return book
  }

  /** Accepted members' user ids (realtime fan-out, notifications). */
  async memberUserIds(bookId: number): Promise<number[]> {
    const rows = await db
      .from('book_members')
      .where('book_id', bookId)
      .where('invite', 'accepted')
      .where('del', false)
      .select('user_id')
    return rows.map((row) => Number(row.user_id))
  }
}

const notFound = () => rpcError('NOT_FOUND', 'Book not found')
