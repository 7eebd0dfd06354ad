import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { UserService } from '#core/services/user_service'
import { TABLES, type MessageRow } from '../models/records.js'
import { serializeMessage } from '../serializers/message_serializer.js'
import booksConfig from '../config.js'
import { BookAccessService, type BookRef } from './book_access_service.js'
import { EventService } from './event_service.js'
import { chunks } from './book_queries.js'

export interface MessageQuery {
  nbMax?: number
  page?: number
  smidFirst?: number
  smidLast?: number
  sstamp?: number
  search?: string
}

/**
 * The longest search_string. SQLite refuses a LIKE pattern over 50,000 bytes
 * (SQLITE_MAX_LIKE_PATTERN_LENGTH) and the query failed; escaped, a search
 * takes at most 3 bytes per UTF-16 unit (an escaped ASCII wildcard 2, a BMP
 * character 3, a surrogate pair 4 for two units), so 10,000 stays well below.
 */
export const MAX_SEARCH_LENGTH = 10_000

/**
 * `%` and `_` are wildcards of LIKE: a search for them must match them
 * literally. `!` is the escape character (a backslash means different things
 * in MySQL and SQLite string literals).
 */
const likePattern = (text: string) => `%${text.replace(/[!%_]/g, (char) => `!${char}`)}%`
const LIKE = "msg LIKE ? ESCAPE '!'"

/** Message reads: getBookMessages. Message queries never join users (see lastMessages). */
@inject()
export class MessageQueries {
  constructor(
    private access: BookAccessService,
    private events: EventService,
    private users: UserService
  ) {}

  /** getBookMessages: the book `b_o`/`b_c` names, readable by the actor, and a page of it (see list). */
  async listFor(actor: Actor, b_o: string, b_c: string, query: MessageQuery) {
    const book = await this.access.resolveFor(actor, b_o, b_c, 'read')
    return { book, messages: await this.list(book, query) }
  }

  /**
   * getBookMessages (spec 4.A.3): live messages newest first, nbMax per page,
   * within smidFirst/smidLast; with sstamp, every message of the smid range
   * changed after it (deleted ones included) is added without paging.
   */
  /** How many live messages the book has (matching `search` as list's search does). */
  async count(bookId: number, search?: string) {
    const query = db.from(TABLES.messages).where('book_id', bookId).where('del', false)
    const text = search?.trim() ?? ''
    if (text) query.whereRaw(LIKE, [likePattern(text)])
    const row = await query.count('* as total').first()
    return Number(row?.total ?? 0)
  }

  async list(book: BookRef, query: MessageQuery) {
    const nbMax = Math.min(query.nbMax || booksConfig.defaultPageSize, booksConfig.maxPageSize)
    const page = Math.max(1, query.page ?? 1)
    const { smidFirst, smidLast } = query
    const search = query.search?.trim() ?? ''

    // Two steps: the page's smids from the covering (book_id, del, smid) index,
    // then the rows by primary key. Asked for whole rows at once, MariaDB
    // prefers a ref scan of (book_id, del) that ignores the smid bound.
    const paged = db
      .from(TABLES.messages)
      .where('book_id', book.id)
      .where('del', false)
      .orderBy('smid', 'desc')
      .limit(nbMax)
      .offset((page - 1) * nbMax)
      .select('smid')
    if (smidFirst !== undefined && smidLast !== undefined) {
      paged.where((range) => range.where('smid', '>', smidFirst).orWhere('smid', '<', smidLast))
    } else if (smidLast !== undefined) {
      paged.where('smid', '<', smidLast)
    } else if (smidFirst !== undefined) {
      paged.where('smid', '>', smidFirst)
    }
    if (search) paged.whereRaw(LIKE, [likePattern(search)])
    const pageRows = await paged
    const wanted = new Set<number>(pageRows.map((row) => Number(row.smid)))

    if (query.sstamp !== undefined) {
      const changed = db
        .from(TABLES.messages)
        .where('book_id', book.id)
        .where('sstamp', '>', query.sstamp)
        .orderBy('sstamp', 'desc')
        .limit(booksConfig.messagesDeltaMax)
        .select('smid')
      // "In the smid range": the messages the client holds, between smidLast and smidFirst.
      if (smidLast !== undefined) changed.where('smid', '>=', smidLast)
      if (smidFirst !== undefined) changed.where('smid', '<=', smidFirst)
      if (search) changed.whereRaw(LIKE, [likePattern(search)])
      for (const row of await changed) wanted.add(Number(row.smid))
    }

    const rows: MessageRow[] = []
    for (const group of chunks([...wanted])) {
      rows.push(...(await db.from(TABLES.messages).whereIn('smid', group)))
    }
    rows.sort((a, b) => Number(b.smid) - Number(a.smid))

    const withEvents = rows
      .filter((row) => row.has_event && !row.del)
      .map((row) => Number(row.smid))
    const [events, codes] = await Promise.all([
      withEvents.length > 0 ? this.events.forMessages(withEvents) : new Map(),
      this.users.codesOf(rows.map((row) => Number(row.creator_id))),
    ])
    return rows.map((row) =>
      serializeMessage(row, {
        u_c: codes.get(Number(row.creator_id)) ?? '',
        event: events.get(Number(row.smid)) ?? null,
      })
    )
  }
}
