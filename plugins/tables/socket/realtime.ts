import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import type { SocketHub } from '#core/socket/hub'
import type { Realtime } from '#core/socket/socket_handler'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import '../events.js'

/**
 * Row writes change the book: its members get book updates ready (type 8,
 * coalesced). Made once by the container (its services injected), then bound
 * to the hub. The members of a book are read once per turn of the event loop
 * however many writes of it were announced in that turn (a group-committed
 * batch of cell writes emits one event per write; the hub coalesces the
 * notifications over a longer delay anyway).
 */
@inject()
export default class TablesRealtime implements Realtime {
  /** Books whose members are to be told, read on the next turn. */
  private pending = new Set<number>()

  constructor(private access: BookAccessService) {}

  bind(hub: SocketHub) {
    emitter.on('tables:rows_changed', ({ bookId }) => {
      if (this.pending.has(bookId)) return
      this.pending.add(bookId)
      if (this.pending.size === 1) setImmediate(() => this.flush(hub))
    })
  }

  private flush(hub: SocketHub) {
    const books = [...this.pending]
    this.pending.clear()
    for (const bookId of books)
      this.access
        .memberUserIds(bookId)
        .then((members) => hub.bookUpdates(members))
        .catch((error) => hub.logger.error({ err: error }, 'tables realtime: fan-out failed'))
  }
}
