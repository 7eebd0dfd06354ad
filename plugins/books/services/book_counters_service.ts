import app from '@adonisjs/core/services/app'
import type { Logger } from '@adonisjs/core/logger'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { StampService } from '#core/services/stamp_service'
import { TABLES } from '../models/rows.js'

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
 * serialize with refresh() and adjust whichever part holds the message.
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

      const counted = await trx
        .from(TABLES.messages)
        .where('book_id', bookId)
        .where('cstamp', '>', from)
        .where('cstamp', '<=', until)
        .where('del', false)
        .select('smid', 'creator_id')
      if (counted.length > 0) await this.addUnread(trx, bookId, counted)
      await trx
        .from(TABLES.books)
        .where('id', bookId)
        .update({
          nb_msgs: trx.knexRawQuery('nb_msgs + ?', [counted.length]),
          counted_until: until,
        })
    })
  }

  private async addUnread(
    trx: TransactionClientContract,
    bookId: number,
    messages: { smid: number; creator_id: number }[]
  ) {
    const members = await trx
      .from(TABLES.members)
      .where('book_id', bookId)
      .where('invite', 'accepted')
      .where('del', false)
      .forUpdate()
      .select('id', 'user_id', 'last_msg_read')
    for (const member of members) {
      const lastRead = Number(member.last_msg_read)
      const userId = Number(member.user_id)
      let unread = 0
      for (const message of messages) {
        if (Number(message.smid) > lastRead && Number(message.creator_id) !== userId) unread++
      }
      if (unread > 0) {
        await trx
          .from(TABLES.members)
          .where('id', member.id)
          .update({ nb_not_read: trx.knexRawQuery('nb_not_read + ?', [unread]) })
      }
    }
  }
}
