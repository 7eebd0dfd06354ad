import db from '@adonisjs/lucid/services/db'
import type { UserService } from '#core/services/user_service'
import type { BookRow, MemberRow, MessageRow } from '../models/records.js'
import { TABLES } from '../models/records.js'

/**
 * Set-wise reads shared by the books services: each takes many books at
 * once, so that a listing costs a fixed number of queries whatever its size.
 */

const CHUNK = 500

export function chunks<T>(items: T[], size = CHUNK): T[][] {
  const result: T[][] = []
  for (let index = 0; index < items.length; index += size)
    result.push(items.slice(index, index + size))
  return result
}

/**
 * For each book: the highest message stamp (edits and deletes included) and
 * the smid of the newest live message. Written as correlated
 * `ORDER BY … DESC LIMIT 1` subqueries, one index probe each: a
 * `MAX() … GROUP BY book_id` reads every message of the book on SQLite (no
 * loose index scan), and MariaDB does the same for a correlated MAX().
 */
export async function bookMessageHeads(bookIds: number[]) {
  const result = new Map<number, { maxStamp: number; lastSmid: number }>()
  for (const ids of chunks(bookIds)) {
    const rows = await db
      .from(`${TABLES.books} as b`)
      .whereIn('b.id', ids)
      .select('b.id')
      .select(
        db.raw(
          `(SELECT m.sstamp FROM ${TABLES.messages} m WHERE m.book_id = b.id ORDER BY m.sstamp DESC LIMIT 1) AS max_sstamp`
        ),
        db.raw(
          `(SELECT m.smid FROM ${TABLES.messages} m WHERE m.book_id = b.id AND m.del = ? ORDER BY m.smid DESC LIMIT 1) AS last_smid`,
          [false]
        )
      )
    for (const row of rows) {
      result.set(Number(row.id), {
        maxStamp: Number(row.max_sstamp ?? 0),
        lastSmid: Number(row.last_smid ?? 0),
      })
    }
  }
  return result
}

/**
 * The newest live message of each book (smids from bookMessageHeads), with its
 * creator's code. Message queries never join users: with few users the planner
 * would drive the join from users and scan a book's messages through the
 * creator index instead of reading the newest ones from (book_id, del, smid).
 */
export async function lastMessages(lastSmids: number[], users: UserService) {
  const result = new Map<number, { row: MessageRow; u_c: string }>()
  for (const smids of chunks(lastSmids.filter((smid) => smid > 0))) {
    const rows: MessageRow[] = await db.from(TABLES.messages).whereIn('smid', smids)
    const codes = await users.codesOf(rows.map((row) => Number(row.creator_id)))
    for (const row of rows) {
      result.set(Number(row.book_id), { row, u_c: codes.get(Number(row.creator_id)) ?? '' })
    }
  }
  return result
}

/**
 * Messages created after each book's counted_until (the counters' tail, see
 * BookCountersService): smid and creator, enough to count nbMsgs and nbNotRead.
 */
export async function counterTails(books: { id: number; counted_until: number }[]) {
  const result = new Map<number, { smid: number; creator_id: number }[]>()
  for (const group of chunks(books)) {
    // One range of the (book_id, cstamp) index per book, written out as SQL:
    // building hundreds of nested knex closures costs more than the query.
    const ranges = group.map(() => '(book_id = ? AND cstamp > ?)').join(' OR ')
    const bindings = group.flatMap((book) => [book.id, book.counted_until])
    const rows = await db
      .from(TABLES.messages)
      .whereRaw(`(${ranges})`, bindings)
      .where('del', false)
      .select('book_id', 'smid', 'creator_id')
    for (const row of rows) {
      const bookId = Number(row.book_id)
      const tail = result.get(bookId) ?? []
      tail.push({ smid: Number(row.smid), creator_id: Number(row.creator_id) })
      result.set(bookId, tail)
    }
  }
  return result
}

export interface CountedMember {
  user_id: number
  last_msg_read: number
  nb_not_read: number
}

/** nbMsgs and a member's nbNotRead: the counted part plus the tail. */
export function countsFor(
  book: Pick<BookRow, 'nb_msgs'>,
  member: CountedMember | null,
  tail: { smid: number; creator_id: number }[]
) {
  const nbMsgs = Number(book.nb_msgs) + tail.length
  let nbNotRead = 0
  if (member) {
    const lastRead = Number(member.last_msg_read)
    const userId = Number(member.user_id)
    nbNotRead = Number(member.nb_not_read)
    for (const message of tail)
      if (message.smid > lastRead && message.creator_id !== userId) nbNotRead++
  }
  return { nbMsgs: Math.max(0, nbMsgs), nbNotRead: Math.max(0, nbNotRead) }
}

/** Live members (invited or accepted) of each book, with their codes, in joining order. */
export async function membersOf(bookIds: number[]) {
  const result = new Map<
    number,
    { user_id: number; u_c: string; invite: MemberRow['invite']; right: number }[]
  >()
  for (const ids of chunks(bookIds)) {
    const rows = await db
      .from(`${TABLES.members} as bm`)
      .join('users as u', 'u.id', 'bm.user_id')
      .whereIn('bm.book_id', ids)
      .where('bm.del', false)
      .orderBy('bm.book_id')
      .orderBy('bm.id')
      .select('bm.book_id', 'bm.user_id', 'bm.invite', 'bm.right', 'u.code')
    for (const row of rows) {
      const bookId = Number(row.book_id)
      const list = result.get(bookId) ?? []
      list.push({
        user_id: Number(row.user_id),
        u_c: row.code,
        invite: row.invite,
        right: Number(row.right),
      })
      result.set(bookId, list)
    }
  }
  return result
}
