import { randomUUID } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import type { StampService } from '#core/services/stamp_service'
import { isUniqueViolation } from '#core/services/db_errors'
import { quoteId, readQuery, trxQuery } from '#core/native_sql'
import {
  TABLES,
  nowSeconds,
  type EventInput,
  type MediaEntry,
  type MessageRow,
} from '../models/rows.js'
import { RIGHT_READWRITEDELETE } from '../rights.js'
import { serializeMessage } from '../serializers/message_serializer.js'
import type { BookAccessService, BookRef } from './book_access_service.js'
import type { BookCountersService } from './book_counters_service.js'
import type { EventService } from './event_service.js'
import booksConfig from '../config.js'
import { chunks, userCodes } from './book_queries.js'
import '../events.js'

/** What sendMsg (HTTP) and the socket's send message (type 1) carry. */
export interface SendInput {
  msg?: string
  /** msg_id / socket smid: edit this message (0 or absent: a new message). */
  smid?: number
  b_o?: string
  b_c?: string
  /** E-mail text body (msgBody). */
  body?: string
  /** E-mail HTML body (msgBodyHTML). */
  bodyHtml?: string
  nbMedias?: number
  nbDocs?: number
  nbEmailCids?: number
  /** The `event` parameter as received (JSON string or object); see EventService.parse. */
  event?: unknown
  /** Client-chosen uuid of a new message (idempotency key: a resend returns the same message). */
  uuid?: string
  msgType?: string
  msgMethod?: string
  msgColor?: string
  pid?: number
  /** Socket send message with del true: delete the message named by smid or uuid. */
  del?: boolean
}

export interface SendResult {
  book: BookRef
  smid: number
  uuid: string
  /** Unix seconds of the message's creation. */
  created: number
  /** The stamp to hand to the client (the watermark once the write committed). */
  sstamp: number
  /** False when an edit, a delete, or a resend of a known uuid. */
  isNew: boolean
  del: boolean
  message: ReturnType<typeof serializeMessage>
}

export interface MessageQuery {
  nbMax?: number
  page?: number
  smidFirst?: number
  smidLast?: number
  sstamp?: number
  search?: string
}

const UUID = /^[\w.:@+-]{1,64}$/
export const MAX_MSG_LENGTH = 65_535
export const MAX_BODY_LENGTH = 4_000_000

const messageNotFound = () => rpcError('NOT_FOUND', 'Message not found')

/** New messages per group-commit transaction (see MessageService.queueCreate). */
const CREATE_BATCH = 64

/** A new message's columns, but its stamps and times (set in the transaction). */
type MessageFields = Omit<MessageRow, 'smid' | 'created' | 'last_modified' | 'cstamp' | 'sstamp'>

interface CreatedMessage {
  row: MessageRow
  sstamp: number
}

interface PendingCreate {
  actor: Actor
  book: BookRef
  fields: MessageFields
  resolve(created: CreatedMessage | null): void
  reject(error: unknown): void
}

/** Inserts a new message with a driver-level statement; answers its full row. */
async function insertMessage(
  trx: TransactionClientContract,
  stamp: number,
  fields: MessageFields
): Promise<MessageRow> {
  const now = nowSeconds()
  const row = { ...fields, created: now, last_modified: now, cstamp: stamp, sstamp: stamp }
  const columns = Object.keys(row)
  const result = await trxQuery(
    trx,
    `INSERT INTO ${TABLES.messages} (${columns.map(quoteId).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    Object.values(row)
  )
  const smid = Number(result.insertId ?? result.lastInsertRowid)
  return { ...row, smid } as MessageRow
}

/**
 * `%` and `_` are wildcards of LIKE: a search for them must match them
 * literally. `!` is the escape character (a backslash means different things
 * in MySQL and SQLite string literals).
 */
const likePattern = (text: string) => `%${text.replace(/[!%_]/g, (char) => `!${char}`)}%`
const LIKE = "msg LIKE ? ESCAPE '!'"

/**
 * Messages: the one implementation behind sendMsg, the socket's send
 * message, deleteMsg, getBookMessages, markBooksMessagesAsRead and
 * copyOrMoveMessage.
 */
export class MessageService {
  constructor(
    private stamps: StampService,
    private access: BookAccessService,
    private counters: BookCountersService,
    private events: EventService
  ) {}

  /**
   * sendMsg / socket send message: creates a message, edits one (smid), or
   * deletes one (del). The book defaults to the session's book, then b_o to
   * the sender and b_c to the first word of msg.
   */
  async send(actor: Actor, input: SendInput): Promise<SendResult> {
    this.checkLengths(input)
    if (input.del) return this.deleteAsSend(actor, input)
    if (input.smid && input.smid > 0) return this.edit(actor, input)
    return this.create(actor, input)
  }

  private checkLengths(input: SendInput) {
    if ((input.msg?.length ?? 0) > MAX_MSG_LENGTH) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter msg: at most ${MAX_MSG_LENGTH} characters`,
        { field: 'msg' }
      )
    }
    if ((input.body?.length ?? 0) + (input.bodyHtml?.length ?? 0) > MAX_BODY_LENGTH) {
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter body: too long', { field: 'body' })
    }
    for (const field of ['msgType', 'msgMethod', 'msgColor'] as const) {
      if ((input[field]?.length ?? 0) > (field === 'msgType' ? 16 : 32)) {
        throw rpcError('INVALID_PARAMETER', `Invalid parameter ${field}: too long`, { field })
      }
    }
  }

  /** The book a new message goes to (see send). */
  async targetBook(
    actor: Actor,
    input: { b_o?: string; b_c?: string; msg?: string }
  ): Promise<BookRef> {
    const restrictions = actor.restrictions
    const code = input.b_c?.trim() || restrictions.carnet_code || firstWord(input.msg)
    if (!code)
      throw rpcError(
        'MISSING_PARAMETER',
        'Missing parameter: b_c (or a first word of msg naming the book)'
      )
    const owner = input.b_o?.trim() || restrictions.carnet_owner || ''
    if (owner) return this.access.resolveFor(actor, owner, code, 'write')

    const own = await this.access.resolve(actor.user.code, code)
    if (own) {
      await this.access.assert(actor, own, 'write')
      return own
    }
    // No b_o and no own book of that code: a book of that code shared with the sender, if only one.
    const shared = await db
      .from(`${TABLES.members} as bm`)
      .join(`${TABLES.books} as b`, 'b.id', 'bm.book_id')
      .join('users as o', 'o.id', 'b.owner_id')
      .where('bm.user_id', actor.user.id)
      .where('bm.invite', 'accepted')
      .where('bm.del', false)
      .where('b.del', false)
      .where('b.code', code)
      .limit(2)
      .select('o.code as owner_code')
    if (shared.length !== 1) throw rpcError('NOT_FOUND', 'Book not found')
    return this.access.resolveFor(actor, shared[0].owner_code, code, 'write')
  }

  private async create(actor: Actor, input: SendInput): Promise<SendResult> {
    const book = await this.targetBook(actor, input)
    const uuid = input.uuid?.trim() || randomUUID()
    if (!UUID.test(uuid)) {
      throw rpcError(
        'INVALID_PARAMETER',
        'Invalid parameter uuid: 1 to 64 letters, digits or . : @ + - _',
        { field: 'uuid' }
      )
    }
    const msg = input.msg ?? ''
    const hasContent =
      msg.trim() !== '' ||
      Boolean(input.body) ||
      Boolean(input.bodyHtml) ||
      (input.nbMedias ?? 0) > 0 ||
      (input.nbDocs ?? 0) > 0
    if (!hasContent) throw rpcError('MISSING_PARAMETER', 'Missing parameter: msg')
    const event = await this.events.parse(input.event, book)

    // A uuid chosen by the client may be a resend; one made here is new.
    if (input.uuid?.trim()) {
      const known = await this.byUuid(book.id, uuid)
      if (known) return this.resend(actor, book, known)
    }

    const creator = actor.user
    const fields: MessageFields = {
      book_id: book.id,
      uuid,
      creator_id: creator.id,
      pid: input.pid ?? 0,
      msg,
      msg_body: input.body ?? null,
      msg_body_html: input.bodyHtml ?? null,
      msg_type: input.msgType || 'm',
      msg_method: input.msgMethod ?? '',
      msg_color: input.msgColor ?? '',
      nb_comments: 0,
      last_comment_id: 0,
      nb_medias: input.nbMedias ?? 0,
      nb_email_cids: input.nbEmailCids ?? 0,
      nb_docs: input.nbDocs ?? 0,
      medias: null,
      has_event: Boolean(event),
      del: false,
    }
    try {
      if (event) {
        const row = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
          const inserted = await insertMessage(trx, stamp, fields)
          await this.events.save(trx, stamp, inserted, event)
          afterCommit(() => this.afterCreate(actor, book, inserted, event))
          return inserted
        })
        return this.result(book, row, creator.code, event, true)
      }
      const created = await this.queueCreate(actor, book, fields)
      if (created) return this.result(book, created.row, creator.code, null, true, created.sstamp)
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
    }
    // The same uuid sent twice at once: the second insert loses, and answers the first.
    const winner = await this.byUuid(book.id, uuid)
    if (winner) return this.resend(actor, book, winner)
    throw rpcError('CONFLICT', 'Another message of this book already has this uuid', {
      field: 'uuid',
    })
  }

  /**
   * New messages (without an event) waiting for the running transaction.
   * Sends that arrive while a transaction is in flight are inserted together
   * in the next one (group commit): one stamp and one commit — one log flush
   * on MariaDB — for the batch, while each send keeps its own checks, answer
   * and events. A send alone waits for nothing.
   */
  private createQueue: PendingCreate[] = []
  private draining = false

  /**
   * The inserted row and the watermark after its commit (one read for the
   * batch), or null when a message of this book already has the uuid.
   */
  private queueCreate(actor: Actor, book: BookRef, fields: MessageFields) {
    return new Promise<CreatedMessage | null>((resolve, reject) => {
      this.createQueue.push({ actor, book, fields, resolve, reject })
      if (!this.draining) void this.drainCreates()
    })
  }

  private async drainCreates() {
    this.draining = true
    try {
      while (this.createQueue.length) {
        await this.insertBatch(this.createQueue.splice(0, CREATE_BATCH))
      }
    } finally {
      this.draining = false
    }
  }

  private async insertBatch(batch: PendingCreate[]) {
    const inserted = new Map<PendingCreate, MessageRow | null>()
    try {
      await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
        inserted.clear() // a retried transaction starts over
        for (const job of batch) {
          try {
            const row = await insertMessage(trx, stamp, job.fields)
            inserted.set(job, row)
            afterCommit(() => this.afterCreate(job.actor, job.book, row, null))
          } catch (error) {
            // Only that statement failed (both databases roll back the statement, not the transaction).
            if (!isUniqueViolation(error)) throw error
            inserted.set(job, null)
          }
        }
      })
    } catch (error) {
      // Any other failure: each send gets its own transaction, so one bad send fails alone.
      if (batch.length > 1) {
        for (const job of batch) await this.insertBatch([job])
      } else {
        batch[0].reject(error)
      }
      return
    }
    let sstamp: number
    try {
      sstamp = await this.stamps.watermark()
    } catch (error) {
      for (const job of batch) job.reject(error)
      return
    }
    for (const job of batch) {
      const row = inserted.get(job)!
      job.resolve(row ? { row, sstamp } : null)
    }
  }

  private async afterCreate(
    actor: Actor,
    book: BookRef,
    row: MessageRow,
    event: EventInput | null,
    copiedFrom?: { bookId: number; smid: number }
  ) {
    this.counters.schedule(book.id)
    const message = serializeMessage(row, {
      u_c: await this.codeOf(row.creator_id, actor),
      event: event || row.has_event ? await this.eventOf(Number(row.smid)) : null,
    })
    await emitter.emit('books:message_created', {
      book,
      message: message as any,
      creatorId: Number(row.creator_id),
      actorId: actor.principal.id,
      copiedFrom,
    })
  }

  /** A deleted message as clients receive it: identity, stamps and del true, no content. */
  private async deletedWire(row: MessageRow, stamp: number, actor: Actor) {
    const deleted = { ...row, del: true, sstamp: stamp, last_modified: nowSeconds() }
    return serializeMessage(deleted, {
      u_c: await this.codeOf(Number(row.creator_id), actor),
    }) as any
  }

  private async codeOf(userId: number, actor: Actor) {
    if (userId === actor.user.id) return actor.user.code
    const row = await db.from('users').where('id', userId).select('code').first()
    return String(row?.code ?? '')
  }

  private async eventOf(smid: number) {
    const events = await this.events.forMessages([smid])
    return events.get(smid) ?? null
  }

  private async byUuid(bookId: number, uuid: string) {
    const [row] = await readQuery(
      `SELECT * FROM ${TABLES.messages} WHERE book_id = ? AND uuid = ? LIMIT 1`,
      [bookId, uuid]
    )
    return (row ?? null) as MessageRow | null
  }

  /** A resend of a uuid already stored answers that message (a client retrying after a lost ack). */
  private async resend(actor: Actor, book: BookRef, row: MessageRow): Promise<SendResult> {
    if (Number(row.creator_id) !== actor.user.id) {
      throw rpcError('CONFLICT', 'Another message of this book already has this uuid', {
        field: 'uuid',
      })
    }
    if (row.del)
      throw rpcError('CONFLICT', 'The message with this uuid was deleted', { field: 'uuid' })
    return this.result(
      book,
      row,
      actor.user.code,
      row.has_event ? await this.eventOf(Number(row.smid)) : null,
      false
    )
  }

  private async result(
    book: BookRef,
    row: MessageRow,
    u_c: string,
    event: EventInput | { row: any; participants: any[] } | null,
    isNew: boolean,
    /** The watermark once the write committed, when the caller already has it. */
    sstamp?: number
  ): Promise<SendResult> {
    const eventView =
      event && 'row' in event ? event : event ? await this.eventOf(Number(row.smid)) : null
    return {
      book,
      smid: Number(row.smid),
      uuid: row.uuid,
      created: Number(row.created),
      sstamp: sstamp ?? (await this.stamps.watermark()),
      isNew,
      del: Boolean(row.del),
      message: serializeMessage(row, { u_c, event: eventView }),
    }
  }

  /** The message and its book, checked against b_o/b_c when given; NOT_FOUND when not visible. */
  private async locate(
    actor: Actor,
    input: { smid?: number; uuid?: string; b_o?: string; b_c?: string }
  ) {
    let row: MessageRow | null = null
    if (input.smid && input.smid > 0) {
      row = (await db.from(TABLES.messages).where('smid', input.smid).first()) ?? null
    } else if (input.uuid) {
      const book = await this.targetBook(actor, input).catch(() => null)
      if (book) row = await this.byUuid(book.id, input.uuid)
    } else {
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: msg_id')
    }
    if (!row) throw messageNotFound()
    const book = await this.access.findById(Number(row.book_id))
    if (!book) throw messageNotFound()
    if (
      (input.b_c && input.b_c.trim() !== book.b_c) ||
      (input.b_o && input.b_o.trim() !== book.b_o)
    ) {
      throw messageNotFound()
    }
    // A non-member learns nothing: the same answer as a message that does not exist.
    const right = await this.access.rightOf(actor.user.id, book.id)
    if (right === null) {
      this.access.assertRestrictions(actor, book, 'read')
      throw messageNotFound()
    }
    return { row, book }
  }

  /** Edit and delete: the creator with RIGHT_READWRITE, anyone with RIGHT_READWRITEDELETE. */
  private async assertCanChange(actor: Actor, book: BookRef, row: MessageRow) {
    const right = await this.access.assert(actor, book, 'write')
    if (Number(row.creator_id) !== actor.user.id && right < RIGHT_READWRITEDELETE) {
      throw rpcError('FORBIDDEN', "Changing another member's message needs RIGHT_READWRITEDELETE")
    }
  }

  private async edit(actor: Actor, input: SendInput): Promise<SendResult> {
    const { row, book } = await this.locate(actor, input)
    await this.assertCanChange(actor, book, row)
    if (row.del) throw messageNotFound()
    const event = await this.events.parse(input.event, book)
    const updated = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const update: Record<string, unknown> = { last_modified: nowSeconds(), sstamp: stamp }
      if (input.msg !== undefined) update.msg = input.msg
      if (input.body !== undefined) update.msg_body = input.body
      if (input.bodyHtml !== undefined) update.msg_body_html = input.bodyHtml
      if (input.msgColor !== undefined) update.msg_color = input.msgColor
      if (input.nbMedias !== undefined) update.nb_medias = input.nbMedias
      if (input.nbDocs !== undefined) update.nb_docs = input.nbDocs
      if (event !== undefined) update.has_event = event !== null
      const changed = await trx
        .from(TABLES.messages)
        .where('smid', row.smid)
        .where('del', false)
        .update(update)
      if (!Number(changed)) throw messageNotFound()
      if (event !== undefined) await this.events.save(trx, stamp, row, event)
      const fresh = (await trx.from(TABLES.messages).where('smid', row.smid).first()) as MessageRow
      afterCommit(async () => {
        const message = serializeMessage(fresh, {
          u_c: await this.codeOf(Number(fresh.creator_id), actor),
          event: fresh.has_event ? await this.eventOf(Number(fresh.smid)) : null,
        })
        await emitter.emit('books:message_updated', {
          book,
          message: message as any,
          creatorId: Number(fresh.creator_id),
          actorId: actor.principal.id,
        })
      })
      return fresh
    })
    return this.result(
      book,
      updated,
      await this.codeOf(Number(updated.creator_id), actor),
      updated.has_event ? await this.eventOf(Number(updated.smid)) : null,
      false
    )
  }

  private async deleteAsSend(actor: Actor, input: SendInput): Promise<SendResult> {
    const { row, book } = await this.locate(actor, input)
    await this.remove(actor, row, book)
    const fresh = (await db.from(TABLES.messages).where('smid', row.smid).first()) as MessageRow
    return this.result(book, fresh, await this.codeOf(Number(fresh.creator_id), actor), null, false)
  }

  /** deleteMsg: marks the message (and its event) deleted; deleting twice is not an error. */
  async delete(actor: Actor, input: { smid: number; b_o?: string; b_c?: string }) {
    const { row, book } = await this.locate(actor, input)
    await this.remove(actor, row, book)
    return { book, smid: Number(row.smid), sstamp: await this.stamps.watermark() }
  }

  private async remove(actor: Actor, row: MessageRow, book: BookRef) {
    await this.assertCanChange(actor, book, row)
    if (row.del) return
    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const removed = await this.markDeleted(trx, stamp, book.id, row)
      if (!removed) return
      afterCommit(async () =>
        emitter.emit('books:message_deleted', {
          book,
          smid: Number(row.smid),
          uuid: row.uuid,
          sstamp: stamp,
          creatorId: Number(row.creator_id),
          actorId: actor.principal.id,
          message: await this.deletedWire(row, stamp, actor),
        })
      )
    })
  }

  /**
   * Deletes inside a write. The book row is locked first, as refresh() does,
   * so the message is taken out of whichever counter part holds it.
   */
  private async markDeleted(
    trx: TransactionClientContract,
    stamp: number,
    bookId: number,
    row: MessageRow
  ) {
    const book = await trx
      .from(TABLES.books)
      .where('id', bookId)
      .forUpdate()
      .select('counted_until')
      .first()
    const changed = await trx
      .from(TABLES.messages)
      .where('smid', row.smid)
      .where('del', false)
      .update({ del: true, sstamp: stamp, last_modified: nowSeconds() })
    if (!Number(changed)) return false
    if (row.has_event) await this.events.deleteFor(trx, stamp, Number(row.smid))
    if (book && Number(row.cstamp) <= Number(book.counted_until)) {
      await trx
        .from(TABLES.books)
        .where('id', bookId)
        .where('nb_msgs', '>', 0)
        .update({ nb_msgs: trx.knexRawQuery('nb_msgs - 1') })
      await trx
        .from(TABLES.members)
        .where('book_id', bookId)
        .where('invite', 'accepted')
        .where('del', false)
        .where('last_msg_read', '<', row.smid)
        .whereNot('user_id', row.creator_id)
        .where('nb_not_read', '>', 0)
        .update({ nb_not_read: trx.knexRawQuery('nb_not_read - 1') })
    }
    return true
  }

  /**
   * getBookMessages (4.A.3): live messages newest first, nbMax per page, within
   * smidFirst/smidLast; with sstamp, every message of the smid range changed
   * after it (deleted ones included) is added without paging.
   */
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
      userCodes(rows.map((row) => row.creator_id)),
    ])
    return rows.map((row) =>
      serializeMessage(row, {
        u_c: codes.get(Number(row.creator_id)) ?? '',
        event: events.get(Number(row.smid)) ?? null,
      })
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

  /**
   * copyOrMoveMessage: a copy of the message (text, bodies, event, medias) in
   * another book; a move also deletes the original. Reading the source and
   * writing the target are required; moving also needs the right to delete it.
   */
  async copyOrMove(
    actor: Actor,
    input: { smid: number; b_o?: string; b_c?: string; target: BookRef; move: boolean }
  ) {
    const { row, book: source } = await this.locate(actor, input)
    if (row.del) throw messageNotFound()
    if (input.move) await this.assertCanChange(actor, source, row)
    else await this.access.assert(actor, source, 'read')
    await this.access.assert(actor, input.target, 'write')
    if (input.move && source.id === input.target.id) {
      throw rpcError(
        'INVALID_PARAMETER',
        'Invalid parameter: a message cannot be moved into its own book',
        { field: 'to_b_c' }
      )
    }
    const eventView = row.has_event ? await this.eventOf(Number(row.smid)) : null
    const copy = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const now = nowSeconds()
      const original: Partial<MessageRow> = { ...row }
      delete original.smid
      const fields = {
        ...original,
        book_id: input.target.id,
        uuid: randomUUID(),
        created: now,
        last_modified: now,
        cstamp: stamp,
        sstamp: stamp,
      }
      const [smid] = await trx.table(TABLES.messages).insert(fields)
      const inserted = { ...fields, smid: Number(smid) } as MessageRow
      if (eventView) {
        await this.events.save(trx, stamp, inserted, {
          eventStart: Number(eventView.row.event_start),
          eventEnd: Number(eventView.row.event_end),
          eventTimezone: eventView.row.event_timezone,
          eventAllDay: Boolean(eventView.row.all_day),
          isBusy: Boolean(eventView.row.is_busy),
          // Participants stay only if they belong to the target book too.
          participantIds: await this.membersAmong(
            trx,
            input.target.id,
            eventView.participants.map((p) => p.id)
          ),
          reminderData: JSON.parse(eventView.row.reminder_data ?? '{}'),
        })
      }
      const moved = input.move ? await this.markDeleted(trx, stamp, source.id, row) : false
      afterCommit(async () => {
        await this.afterCreate(actor, input.target, inserted, null, {
          bookId: source.id,
          smid: Number(row.smid),
        })
        if (moved) {
          await emitter.emit('books:message_deleted', {
            book: source,
            smid: Number(row.smid),
            uuid: row.uuid,
            sstamp: stamp,
            creatorId: Number(row.creator_id),
            actorId: actor.principal.id,
            message: await this.deletedWire(row, stamp, actor),
            movedTo: { bookId: input.target.id, smid: inserted.smid },
          })
        }
      })
      return inserted
    })
    return {
      book: input.target,
      smid: copy.smid,
      uuid: copy.uuid,
      sstamp: await this.stamps.watermark(),
    }
  }

  private async membersAmong(trx: TransactionClientContract, bookId: number, userIds: number[]) {
    if (userIds.length === 0) return []
    const rows = await trx
      .from(TABLES.members)
      .where('book_id', bookId)
      .where('del', false)
      .whereIn('user_id', userIds)
      .select('user_id')
    return rows.map((row) => Number(row.user_id))
  }

  /**
   * The media plugin records a message's files (medias and their counts); the
   * change reaches clients as an edit.
   */
  async setAttachments(
    smid: number,
    input: {
      medias: Partial<MediaEntry>[]
      nbMedias?: number
      nbDocs?: number
      nbEmailCids?: number
    }
  ) {
    const row = (await db.from(TABLES.messages).where('smid', smid).first()) as MessageRow | null
    if (!row) throw messageNotFound()
    const book = await this.access.findById(Number(row.book_id))
    if (!book) throw messageNotFound()
    return this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const update: Record<string, unknown> = {
        medias: JSON.stringify(input.medias),
        sstamp: stamp,
      }
      if (input.nbMedias !== undefined) update.nb_medias = input.nbMedias
      if (input.nbDocs !== undefined) update.nb_docs = input.nbDocs
      if (input.nbEmailCids !== undefined) update.nb_email_cids = input.nbEmailCids
      await trx.from(TABLES.messages).where('smid', smid).update(update)
      const fresh = (await trx.from(TABLES.messages).where('smid', smid).first()) as MessageRow
      afterCommit(async () => {
        const creator = await db.from('users').where('id', fresh.creator_id).select('code').first()
        await emitter.emit('books:message_updated', {
          book,
          message: serializeMessage(fresh, { u_c: String(creator?.code ?? '') }) as any,
          creatorId: Number(fresh.creator_id),
          actorId: Number(fresh.creator_id),
        })
      })
      return { book, smid, sstamp: stamp }
    })
  }
}

/** The first word of a message: the book code when sendMsg has no b_c. */
export function firstWord(msg?: string) {
  return msg?.trim().split(/\s+/)[0] ?? ''
}
