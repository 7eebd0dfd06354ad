import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import type { SocketHub } from '#core/socket/hub'
import type { Realtime } from '#core/socket/socket_handler'
import { MessageType, type Frame, type OutFrame } from '#core/socket/protocol'
import { BookAccessService, type BookRef } from '../services/book_access_service.js'
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
 * How surely a send-message frame (type 1) made the change of message
 * `{uuid, smid}`: 2 it names it (uuid, or smid of an edit or delete), 1 it
 * names nothing (a new message without a client uuid), 0 not. The hub hands
 * it frames as the handler's validator read them (uuid trimmed text, smid a
 * number).
 */
export function sendFrameRating(message: { uuid: unknown; smid: unknown }) {
  return (frame: Frame) => {
    if (frame.type !== MessageType.SEND_MESSAGE) return 0
    const uuid = typeof frame.uuid === 'string' ? frame.uuid : ''
    const smid = typeof frame.smid === 'number' ? frame.smid : 0
    if (uuid !== '' && uuid === message.uuid) return 2
    if (smid > 0 && smid === Number(message.smid)) return 2
    return uuid === '' && !(smid > 0) ? 1 : 0
  }
}

/** The hub signal that tells the other instances a book's members changed. */
export const MEMBERS_CHANGED_SIGNAL = 'books:members'

/**
 * The accepted members of each book (user ids), as `memberUserIds` reads them,
 * kept for the fan-out: a message to a book then costs no query. An entry is
 * dropped when `books:member_changed` is emitted in this process, or signalled
 * by another instance (or console process) through the hub's channel, and is
 * re-read after `ttlMs` in any case (a bound on staleness for writes that emit
 * no event). A read that overlaps an invalidation is used once, never stored.
 */
export class BookMembersCache {
  private entries = new Map<number, { userIds: readonly number[]; at: number }>()
  private loading = new Map<number, Promise<readonly number[]>>()
  /** Counts invalidations; a read started at generation g is stored only if its book was not invalidated since. */
  private generation = 0
  private invalidatedAt = new Map<number, number>()
  private forgottenAt = 0

  constructor(
    private read: (bookId: number) => Promise<number[]>,
    private ttlMs = 30_000,
    private maxBooks = 20_000
  ) {}

  /** The cached members of a book, or undefined (then call load). */
  peek(bookId: number): readonly number[] | undefined {
    const entry = this.entries.get(bookId)
    if (!entry) return undefined
    if (Date.now() - entry.at > this.ttlMs) {
      this.entries.delete(bookId)
      return undefined
    }
    return entry.userIds
  }

  /** Reads the members (one read shared by concurrent callers) and keeps them. */
  load(bookId: number): Promise<readonly number[]> {
    const pending = this.loading.get(bookId)
    if (pending) return pending
    const startedAt = this.generation
    const at = Date.now()
    const reading: Promise<readonly number[]> = this.read(bookId).then(
      (userIds) => {
        if (this.loading.get(bookId) === reading) this.loading.delete(bookId)
        // Invalidated while reading: this answer may predate the change; use it once, do not keep it.
        if (this.changedSince(bookId, startedAt)) return userIds
        if (this.entries.size >= this.maxBooks) {
          const oldest = this.entries.keys().next().value
          if (oldest !== undefined) this.entries.delete(oldest)
        }
        this.entries.set(bookId, { userIds, at })
        return userIds
      },
      (error) => {
        if (this.loading.get(bookId) === reading) this.loading.delete(bookId)
        throw error
      }
    )
    this.loading.set(bookId, reading)
    return reading
  }

  get(bookId: number): Promise<readonly number[]> {
    const cached = this.peek(bookId)
    return cached ? Promise.resolve(cached) : this.load(bookId)
  }

  invalidate(bookId: number) {
    this.generation++
    this.entries.delete(bookId)
    this.loading.delete(bookId)
    if (this.invalidatedAt.size >= this.maxBooks) {
      // Forget the per-book marks, but not what they protect: no read in flight is stored.
      this.invalidatedAt.clear()
      this.forgottenAt = this.generation
    }
    this.invalidatedAt.set(bookId, this.generation)
  }

  private changedSince(bookId: number, generation: number) {
    return this.forgottenAt > generation || (this.invalidatedAt.get(bookId) ?? 0) > generation
  }

  get size() {
    return this.entries.size
  }
}

/**
 * Forwards the books plugin's events (emitted after commit) to the members'
 * sockets and SSE channels: new, edited and deleted messages as type 1 (the
 * socket whose frame caused it excepted: it has its ack), and book updates
 * ready (type 8, coalesced) to every member on any change of their books.
 * Made once by the container (its services injected), then bound to the hub.
 *
 * Listeners never hold up the write that emitted: the fan-out of a change made
 * by a socket frame runs right after that frame's ack has left
 * (hub.afterOrigin), any other on the next turn of the event loop, from the
 * member cache (no query once a book's members are known). The fan-out
 * loop itself is synchronous: one serialization per message, then one send
 * per socket (SocketHub.deliver).
 */
@inject()
export default class BooksRealtime implements Realtime {
  constructor(private access: BookAccessService) {}

  bind(hub: SocketHub) {
    const members = new BookMembersCache((bookId) => this.access.memberUserIds(bookId))
    const failed = (error: unknown) =>
      hub.logger.error({ err: error }, 'books realtime: fan-out failed')

    /** Runs `fanOut` with the book's members, once the origin frame's ack has left. */
    const withMembers = (
      bookId: number,
      fanOut: (userIds: number[]) => void,
      origin: string | null = null
    ) => {
      hub.afterOrigin(origin, () => {
        const run = (userIds: readonly number[]) => {
          try {
            fanOut(userIds as number[])
          } catch (error) {
            failed(error)
          }
        }
        const cached = members.peek(bookId)
        if (cached) run(cached)
        else members.load(bookId).then(run, failed)
      })
    }

    /** A message frame to the book's members (the sending connection excepted), then their type 8. */
    const deliverToBook = (
      bookId: number,
      frame: Parameters<typeof hub.deliver>[0]['frame'],
      origin: ReturnType<typeof hub.originOf>
    ) =>
      withMembers(
        bookId,
        (userIds) => {
          hub.deliver({ userIds, frame, exceptConnection: origin })
          hub.bookUpdates(userIds)
        },
        origin
      )

    const messageChanged = (book: BookRef, message: Record<string, unknown>, actorId: number) => {
      const origin = hub.originOf(actorId, sendFrameRating(message as any))
      deliverToBook(book.id, messageFrame(book, message), origin)
    }

    emitter.on('books:message_created', ({ book, message, actorId }) =>
      messageChanged(book, message, actorId)
    )
    emitter.on('books:message_updated', ({ book, message, actorId }) =>
      messageChanged(book, message, actorId)
    )

    // The event carries the deleted message as getBookMessages answers it: no read needed.
    emitter.on('books:message_deleted', ({ book, smid, uuid, sstamp, actorId, message }) => {
      const origin = hub.originOf(actorId, sendFrameRating({ uuid, smid }))
      const frame = messageFrame(book, {
        u_c: message.u_c,
        uuid,
        smid,
        del: true,
        created: message.created,
        msg: '',
        sstamp,
        lastModified: message.lastModified,
      })
      deliverToBook(book.id, frame, origin)
    })

    emitter.on('books:book_updated', ({ book, changes }) => {
      // A new book: nothing can be cached under its id, but a stale entry must not survive.
      if (changes.includes('created')) members.invalidate(book.id)
      withMembers(book.id, (userIds) => hub.bookUpdates(userIds))
    })

    // The member concerned is told too: an invitation arrives, a removal takes the book away.
    emitter.on('books:member_changed', ({ book, userId }) => {
      members.invalidate(book.id)
      hub.signal(MEMBERS_CHANGED_SIGNAL, book.id)
      withMembers(book.id, (userIds) => hub.bookUpdates([...userIds, userId]))
    })
    hub.onSignal<number>(MEMBERS_CHANGED_SIGNAL, (bookId) => {
      if (typeof bookId === 'number') members.invalidate(bookId)
    })
  }
}
