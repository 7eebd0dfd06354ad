import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import type { SocketHub } from '#core/socket/hub'
import type { Realtime } from '#core/socket/socket_handler'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import '../events.js'

/**
 * Row writes change the book: its members get book updates ready (type 8,
 * coalesced). Made once by the container (its services injected), then bound
 * to the hub.
 */
@inject()
export default class TablesRealtime implements Realtime {
  constructor(private access: BookAccessService) {}

  bind(hub: SocketHub) {
    emitter.on('tables:rows_changed', ({ bookId }) => {
      this.access
        .memberUserIds(bookId)
        .then((members) => hub.bookUpdates(members))
        .catch((error) => hub.logger.error({ err: error }, 'tables realtime: fan-out failed'))
    })
  }
}
