import emitter from '@adonisjs/core/services/emitter'
import type { SocketHub } from '#core/socket/hub'
import bookAccess from '#plugins/books/services/book_access'
import '../events.js'

/** Row writes change the book: its members get book updates ready (type 8, coalesced). */
export default function bindTablesRealtime(hub: SocketHub) {
  emitter.on('tables:rows_changed', ({ bookId }) => {
    bookAccess
      .memberUserIds(bookId)
      .then((members) => hub.bookUpdates(members))
      .catch((error) => hub.logger.error({ err: error }, 'tables realtime: fan-out failed'))
  })
}
