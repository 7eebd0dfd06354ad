import env from '#start/env'
import settings from '#core/settings/main'

/** Settings of the books plugin (env variables listed in README.md). */
const booksConfig = {
  /**
   * Counters (nbMsgs, nbNotRead) are folded into the book row at most once per
   * this delay per book, so that sending a message never locks a shared row.
   */
  counterRefreshMs: env.get('BOOKS_COUNTER_REFRESH_MS', 250),
  /** A getBookMessages sstamp delta is "without paging" (4.A.3 rule 4), within this bound. */
  get messagesDeltaMax() {
    return settings.integer('books.messagesDeltaMax')
  },
  /** getBookMessages' nbMax when empty (4.A.3 rule 1) and its upper bound. */
  defaultPageSize: 50,
  maxPageSize: 1000,
  /** A book whose uncounted tail grows past this is refreshed when read (after a restart, say). */
  tailRefreshThreshold: 200,
}

export default booksConfig
