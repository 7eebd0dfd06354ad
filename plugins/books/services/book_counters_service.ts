import app from '@adonisjs/core/services/app'
import type { Logger } from '@adonisjs/core/logger'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import type { StampService } from '#core/services/stamp_service'
import { trxQuery } from '#core/native_sql'
import { TABLES } from '../models/records.js'
import type { BookRef } from './book_access_service.js'

/**
 * nbMsgs and nbNotRead without a hot row.
 *
 * Incrementing a per-book counter in every send transaction would serialize
 * all senders of a book on that row until their commit (about 900 commits/s
 * on this machine's MariaDB, whatever the concurrency). Instead a send only
 * inserts its message; the counters are kept as
 *
 *   counted part  books.nb_msgs / book_members.nb_not_read, covering messages
 *                 created up to books.counted_until (a stamp), and
 *   tail          messages with cstamp > counted_until, counted at read time
 *                 through the (book_id, cstamp) index.
 *
 * refresh() folds the tail into the counted part, at most once per
 * BOOKS_COUNTER_REFRESH_MS per book, so tails stay short. It advances
 * counted_until only to the stamp watermark, below which every write has
 * committed: a message that commits late is never skipped.
 *
 * deleteMsg and mark-as-read lock the book row (exclusive and shared) so they
 * serialize with refresh() and adjust whichever part holds the message. The
 * read marker (markRead) lives here for that reason: it rewrites the member's
 * counted part.
 *
 * Bound by the provider with a factory (the refresh delay is a config value).
 */
export class BookCountersService {
  private pending = new Map<number, NodeJS.Timeout>()

  constructor(
    private stamps: StampService,
    private logger: Logger,
    private delayMs: number
  ) {}

  /** A message was created in the book: refresh its counters soon. */
  schedule(bookId: number) {
    if (this.pending.has(bookId)) return
    const timer = setTimeout(() => {
      this.pending.delete(bookId)
      this.refresh(bookId).catch((error) => {
        // Readers count the tail, so a refresh lost at shutdown costs nothing.
        if (app.isTerminating || app.isTerminated) return
        this.logger.warn({ err: error, bookId }, 'book counters refresh failed')
      })
    }, this.delayMs)
    timer.unref()
    this.pending.set(bookId, timer)
  }

  /** Runs every scheduled refresh now (tests, shutdown). */
  async flush() {
    const bookIds = [...this.pending.keys()]
    for (const bookId of bookIds) {
      clearTimeout(this.pending.get(bookId))
      this.pending.delete(bookId)
    }
    for (const bookId of bookIds) await this.refresh(bookId)
  }

  /** Cancels scheduled refreshes (shutdown): they are redone lazily by readers. */
  stop() {
    for (const timer of this.pending.values()) clearTimeout(timer)
    this.pending.clear()
  }

  async refresh(bookId: number) {
    // Taken before the transaction reads anything: every message with a
    // creation stamp at or below it is committed and visible to the reads below.
    const until = await this.stamps.watermark()
    await this.stamps.write(async ({ trx }) => {
      const book = await trx
        .from(TABLES.books)
        .where('id', bookId)
        .forUpdate()
        .select('counted_until')
        .first()
      if (!book) return
      const from = Number(book.counted_until)
      if (until <= from) return

      const [{ total }] = await trxQuery(
        trx,
        `SELECT COUNT(*) AS total FROM ${TABLES.messages}
         WHERE book_id = ? AND cstamp > ? AND cstamp <= ? AND del = ?`,
        [bookId, from, until, false]
      )
      const counted = Number(total)
      if (counted > 0) await this.addUnread(trx, bookId, from, until)
      await trx
        .from(TABLES.books)
        .where('id', bookId)
        .update({
          nb_msgs: trx.knexRawQuery('nb_msgs + ?', [counted]),
          counted_until: until,
        })
    })
  }

  /**
   * Each accepted member's not-read count grows by the new messages of others
   * past its last read one: one statement for the whole book (a book of 1,000
   * members took 1,000 updates, holding the book row meanwhile). The book id
   * is bound, not correlated: the count must range over (book_id, cstamp), the
   * new messages only (correlated, MariaDB walked the book by smid).
   */
  private async addUnread(
    trx: TransactionClientContract,
    bookId: number,
    from: number,
    until: number
  ) {
    await trxQuery(
      trx,
      `UPDATE ${TABLES.members} SET nb_not_read = nb_not_read + (
         SELECT COUNT(*) FROM ${TABLES.messages} m
         WHERE m.book_id = ? AND m.cstamp > ? AND m.cstamp <= ? AND m.del = ?
           AND m.smid > ${TABLES.members}.last_msg_read AND m.creator_id <> ${TABLES.members}.user_id)
       WHERE book_id = ? AND invite = 'accepted' AND del = ?`,
      [bookId, from, until, false, bookId, false]
    )
  }

  /**
   * markBooksMessagesAsRead and the socket's clearNotRead: the member has read
   * the book up to `upTo` (default: its newest message). Never moves back.
   */
  async markRead(actor: Actor, book: BookRef, upTo?: number) {
    return this.stamps.write(async ({ trx, stamp }) => {
      // Shared lock: serializes with a counters refresh, not with other readers.
      const locked = await trx
        .from(TABLES.books)
        .where('id', book.id)
        .forShare()
        .select('counted_until')
        .first()
      const member = await trx
        .from(TABLES.members)
        .where('book_id', book.id)
        .where('user_id', actor.user.id)
        .where('del', false)
        .forUpdate()
        .first()
      if (!member || member.invite !== 'accepted') throw rpcError('NOT_FOUND', 'Book not found')
      const newestRow = await trx
        .from(TABLES.messages)
        .where('book_id', book.id)
        .where('del', false)
        .max('smid as smid')
        .first()
      const newest = Number(newestRow?.smid ?? 0)
      const target = Math.max(
        Number(member.last_msg_read),
        upTo === undefined ? newest : Math.min(upTo, newest)
      )
      let unread = 0
      if (target < newest) {
        const row = await trx
          .from(TABLES.messages)
          .where('book_id', book.id)
          .where('del', false)
          .where('smid', '>', target)
          .where('cstamp', '<=', Number(locked?.counted_until ?? 0))
          .whereNot('creator_id', actor.user.id)
          .count('* as total')
          .first()
        unread = Number(row?.total ?? 0)
      }
      if (target !== Number(member.last_msg_read) || unread !== Number(member.nb_not_read)) {
        await trx.from(TABLES.members).where('id', member.id).update({
          last_msg_read: target,
          nb_not_read: unread,
          sstamp: stamp,
          updated_at: new Date(),
        })
      }
      return { book, lastMsgRead: target }
    })
  }
}
