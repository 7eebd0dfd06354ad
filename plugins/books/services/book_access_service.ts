import { quoteId, readCached } from '#core/native_sql'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { NEED_RIGHT, RIGHT_NAMES, type BookNeed } from '../rights.js'

export type { BookNeed } from '../rights.js'
/** The member rights, for other plugins (tables): they import them from this service, not from rights.ts. */
export {
  RIGHT_READ,
  RIGHT_READWRITE,
  RIGHT_READWRITEDELETE,
  RIGHT_ADMIN,
  RIGHT_OWNER,
  RIGHT_NAMES,
  NEED_RIGHT,
  isValidRight,
} from '../rights.js'

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
  /**
   * Books are resolved on every book operation and socket frame: driver-level
   * statements (readCached: on SQLite, reused until the next commit), not the
   * query builder. `right` is quoted: it is a keyword on both databases.
   */
  private bookSql(where: string, withMembership = false) {
    const membership = withMembership
      ? `, bm.${quoteId('right')} AS member_right FROM books b JOIN users u ON u.id = b.owner_id
         LEFT JOIN book_members bm ON bm.book_id = b.id AND bm.user_id = ? AND bm.invite = 'accepted' AND bm.del = ?`
      : ' FROM books b JOIN users u ON u.id = b.owner_id'
    return `SELECT b.id, b.code, b.owner_id, b.archived, u.code AS owner_code${membership}
      WHERE b.del = ? AND ${where} LIMIT 1`
  }

  /** The live (not deleted) book `b_c` of the user whose code is `b_o`. */
  async resolve(b_o: string, b_c: string): Promise<BookRef | null> {
    const owner = String(b_o ?? '').trim()
    const code = String(b_c ?? '').trim()
    if (owner === '' || code === '') return null
    const [row] = await readCached(this.bookSql('u.code = ? AND b.code = ?'), [false, owner, code])
    return row ? toRef(row as BookRow) : null
  }

  async findById(id: number): Promise<BookRef | null> {
    const [row] = await readCached(this.bookSql('b.id = ?'), [false, id])
    return row ? toRef(row as BookRow) : null
  }

  /** The right of an accepted member; null when the user is not (or no longer) an accepted member. */
  async rightOf(userId: number, bookId: number): Promise<number | null> {
    const [row] = await readCached(
      `SELECT ${quoteId('right')} AS member_right FROM book_members
       WHERE book_id = ? AND user_id = ? AND invite = 'accepted' AND del = ? LIMIT 1`,
      [bookId, userId, false]
    )
    return row ? Number(row.member_right) : null
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
    const [row] =
      owner === '' || code === ''
        ? []
        : await readCached(this.bookSql('u.code = ? AND b.code = ?', true), [
            actor.user.id,
            false,
            false,
            owner,
            code,
          ])
    return this.granted(actor, owner, code, need, row as BookRow | undefined)
  }

  /**
   * resolveFor of several requests in one statement (the group-committed sends of a batch: on
   * MariaDB each resolveFor is a round trip). Answers, in order, each request's book or the
   * error resolveFor would have thrown for it. Requests of the same user and book share one
   * lookup; one lookup alone is resolveFor's very statement.
   */
  async resolveManyFor(
    requests: { actor: Actor; b_o: string; b_c: string; need: BookNeed }[]
  ): Promise<(BookRef | Error)[]> {
    const keys = new Map<string, { userId: number; owner: string; code: string; index: number }>()
    const keyOf = requests.map((request) => {
      const owner = String(request.b_o ?? '').trim()
      const code = String(request.b_c ?? '').trim()
      if (owner === '' || code === '') return null
      const key = `${request.actor.user.id}\u0000${owner}\u0000${code}`
      if (!keys.has(key))
        keys.set(key, { userId: request.actor.user.id, owner, code, index: keys.size })
      return key
    })
    const found = new Map<number, BookRow & { k?: number | string }>()
    const lookups = [...keys.values()]
    if (lookups.length === 1) {
      const [{ userId, owner, code }] = lookups
      const [row] = await readCached(this.bookSql('u.code = ? AND b.code = ?', true), [
        userId,
        false,
        false,
        owner,
        code,
      ])
      if (row) found.set(0, row as BookRow)
    } else if (lookups.length > 1) {
      // The same statement per lookup, tagged with its index (a literal: an integer made here).
      const rows = await readCached(
        lookups
          .map((lookup) =>
            this.bookSql('u.code = ? AND b.code = ?', true)
              .replace('SELECT ', `SELECT ${lookup.index} AS k, `)
              .replace(/\s+LIMIT 1$/, '')
          )
          .join(' UNION ALL '),
        lookups.flatMap(({ userId, owner, code }) => [userId, false, false, owner, code])
      )
      // Live books are unique per owner and code: the first row of a lookup is resolveFor's.
      for (const row of rows) {
        const index = Number(row.k)
        if (!found.has(index)) found.set(index, row as BookRow)
      }
    }
    return requests.map((request, position) => {
      const key = keyOf[position]
      const lookup = key === null ? undefined : keys.get(key)
      try {
        return this.granted(
          request.actor,
          String(request.b_o ?? '').trim(),
          String(request.b_c ?? '').trim(),
          request.need,
          lookup ? found.get(lookup.index) : undefined
        )
      } catch (error) {
        return error as Error
      }
    })
  }

  /** resolveFor's answer for the row its statement read (undefined: none). */
  private granted(
    actor: Actor,
    owner: string,
    code: string,
    need: BookNeed,
    row: (BookRow & { member_right?: number | string | null }) | undefined
  ): BookRef {
    if (!row) {
      // A restricted session asking for another book learns only that it is restricted.
      if (!this.allows(actor, { b_o: owner, b_c: code })) {
        throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
      }
      throw notFound()
    }
    const book = toRef(row)
    this.check(
      actor,
      book,
      need,
      row.member_right === null || row.member_right === undefined ? null : Number(row.member_right)
    )
    return book
  }

  /** Whether `otherId` is one of `userId`'s contacts (the media plugin's profile images). */
  async isContact(userId: number, otherId: number): Promise<boolean> {
    const rows = await readCached(
      'SELECT 1 AS found FROM book_contacts WHERE user_id = ? AND contact_id = ? LIMIT 1',
      [userId, otherId]
    )
    return rows.length > 0
  }

  /** Accepted members' user ids (realtime fan-out, notifications). */
  async memberUserIds(bookId: number): Promise<number[]> {
    const rows = await readCached(
      `SELECT user_id FROM book_members WHERE book_id = ? AND invite = 'accepted' AND del = ?`,
      [bookId, false]
    )
    return rows.map((row) => Number(row.user_id))
  }
}

const notFound = () => rpcError('NOT_FOUND', 'Book not found')

/**
 * The book an operation names: b_c is required (a restricted session
 * defaults to its book); b_o defaults to the session's book owner, then to
 * the acting user (u_c), as sendMsg does.
 */
export function bookOf(actor: Actor, input: { b_o?: string; b_c?: string }) {
  const code = input.b_c || actor.restrictions.carnet_code || ''
  if (code === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: b_c', { field: 'b_c' })
  const owner = input.b_o || actor.restrictions.carnet_owner || actor.user.code
  return { b_o: owner, b_c: code }
}
