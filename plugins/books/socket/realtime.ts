import emitter from '@adonisjs/core/services/emitter'
import db from '@adonisjs/lucid/services/db'
import type { SocketHub } from '#core/socket/hub'
import { MessageType, type OutFrame } from '#core/socket/protocol'
import bookAccess from '../services/book_access.js'
import { TABLES } from '../models/rows.js'
import type { BookRef } from '../services/book_access_service.js'
import '../events.js'

/** The receive-message frame (type 1): the spec's fields, plus the book and the stamps. */
function messageFrame(book: BookRef, message: Record<string, unknown>): OutFrame {
  return {
    type: MessageType.SEND_MESSAGE,
    u_c: message.u_c,
    uuid: message.uuid,
    smid: message.smid,
    del: Boolean(message.del),
    created: message.created,
    msg: message.msg ?? '',
    b_o: book.b_o,
    b_c: book.b_c,
    sstamp: message.sstamp,
    lastModified: message.lastModified,
    nbMedias: message.nbMedias ?? 0,
    nbDocs: message.nbDocs ?? 0,
    msgType: message.msgType,
    msgColor: message.msgColor,
  }
}

/**
 * Forwards the books plugin's events (emitted after commit) to the members'
 * sockets and SSE channels: new, edited and deleted messages as type 1 (the
 * socket whose frame caused it excepted: it has its ack), and book updates
 * ready (type 8, coalesced) to every member on any change of their books.
 * Listeners never hold up the write that emitted: fan-out runs detached.
 */
export default function bindBooksRealtime(hub: SocketHub) {
  const detached = (work: () => Promise<void>) => {
    work().catch((error) => hub.logger.error({ err: error }, 'books realtime: fan-out failed'))
  }

  const messageChanged = (book: BookRef, message: Record<string, unknown>) => {
    const origin = hub.currentOrigin()
    detached(async () => {
      const members = await bookAccess.memberUserIds(book.id)
      hub.deliver({
        userIds: members,
        frame: messageFrame(book, message),
        exceptConnection: origin,
      })
      hub.bookUpdates(members)
    })
  }

  emitter.on('books:message_created', ({ book, message }) => messageChanged(book, message))
  emitter.on('books:message_updated', ({ book, message }) => messageChanged(book, message))

  emitter.on('books:message_deleted', ({ book, smid, uuid, sstamp }) => {
    const origin = hub.currentOrigin()
    detached(async () => {
      const row = await db
        .from(`${TABLES.messages} as m`)
        .join('users as u', 'u.id', 'm.creator_id')
        .where('m.smid', smid)
        .select('m.created', 'm.last_modified', 'u.code')
        .first()
      const members = await bookAccess.memberUserIds(book.id)
      const frame = messageFrame(book, {
        u_c: row?.code ?? '',
        uuid,
        smid,
        del: true,
        created: Number(row?.created ?? 0),
        msg: '',
        sstamp,
        lastModified: Number(row?.last_modified ?? 0),
      })
      hub.deliver({ userIds: members, frame, exceptConnection: origin })
      hub.bookUpdates(members)
    })
  })

  emitter.on('books:book_updated', ({ book }) => {
    detached(async () => hub.bookUpdates(await bookAccess.memberUserIds(book.id)))
  })

  // The member concerned is told too: an invitation arrives, a removal takes the book away.
  emitter.on('books:member_changed', ({ book, userId }) => {
    detached(async () => hub.bookUpdates([...(await bookAccess.memberUserIds(book.id)), userId]))
  })
}
