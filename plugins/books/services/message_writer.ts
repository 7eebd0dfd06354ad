import { randomUUID } from 'node:crypto'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { GroupCommit, type Settled } from '#core/services/group_commit'
import { StampService, type WriteScope } from '#core/services/stamp_service'
import { UserService } from '#core/services/user_service'
import { isUniqueViolation } from '#core/services/db_errors'
import { quoteId, readQuery, writeQuery } from '#core/native_sql'
import { OutboxService } from '#core/outbox/outbox_service'
import {
  TABLES,
  nowSeconds,
  type EventInput,
  type MediaEntry,
  type MessageRow,
} from '../models/records.js'
import { RIGHT_READWRITEDELETE } from '../rights.js'
import { serializeMessage } from '../serializers/message_serializer.js'
import { BookAccessService, type BookRef } from './book_access_service.js'
import { BookCountersService } from './book_counters_service.js'
import { EventService, type MessageEventView } from './event_service.js'
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

const UUID = /^[\w.:@+-]{1,64}$/
export const MAX_MSG_LENGTH = 65_535
export const MAX_BODY_LENGTH = 4_000_000

export const messageNotFound = () => rpcError('NOT_FOUND', 'Message not found')

/**
 * Rows another plugin writes in a new message's own transaction (see
 * MessageWriter.createWithin); answers changes to the message's files.
 */
export type WithinCreate = (
  trx: TransactionClientContract,
  row: MessageRow
) => Promise<Partial<Pick<MessageRow, 'medias' | 'nb_medias' | 'nb_docs' | 'nb_email_cids'>>>

/** New messages per group-commit transaction (see MessageWriter.creates). */
const CREATE_BATCH = 64

/** A new message's columns, but its stamps and times (set in the transaction). */
export type MessageFields = Omit<
  MessageRow,
  'smid' | 'created' | 'last_modified' | 'cstamp' | 'sstamp'
>

/** A new message (without an event) waiting for its group-committed transaction. */
interface PendingCreate {
  actor: Actor
  /**
   * The book, resolved and checked before the send was submitted; or null, and `target` names
   * it: the batch resolves and checks the books of all such sends in one statement.
   */
  book: BookRef | null
  target?: { b_o: string; b_c: string }
  fields: MessageFields
}

interface CreatedMessage {
  book: BookRef
  /** Null when a message of the book already had the send's uuid. */
  row: MessageRow | null
  sstamp: number
}

/** Inserts a new message with a driver-level statement; answers its full row. */
async function insertMessage(
  trx: QueryClientContract,
  stamp: number,
  fields: MessageFields
): Promise<MessageRow> {
  const [row] = await insertTogether(trx, stamp, [fields])
  return row
}

const stampedRow = (stamp: number, fields: MessageFields) => {
  const now = nowSeconds()
  return { ...fields, created: now, last_modified: now, cstamp: stamp, sstamp: stamp }
}

/**
 * Text a multi-row INSERT of new messages carries at most: past it, the rest goes in another
 * statement (a message may hold 4 MB of body; MariaDB refuses packets over max_allowed_packet).
 */
const MULTI_INSERT_CHARS = 1_000_000

/**
 * New messages of one transaction, in as few statements as their size allows: on MariaDB each
 * statement is a round trip inside the batch's transaction, which every send of the batch
 * waits for. RETURNING (MariaDB 10.5, SQLite 3.35) names each row's smid, matched by
 * (book_id, uuid), unique. A statement that hits a taken uuid (a resend racing its original)
 * changes nothing (statement-level rollback on both databases) and its messages are inserted
 * one by one. Answers the rows in `list`'s order, null for a message whose uuid was taken.
 * `trx` may also be no transaction (a batch written as a single statement, see
 * mayStageCreated): each statement is then atomic on its own, and so is each message.
 * Exported for its spec (plugins/books/tests/functional/services.spec.ts).
 */
export async function insertMessages(
  trx: QueryClientContract,
  stamp: number,
  list: MessageFields[]
): Promise<(MessageRow | null)[]> {
  const inserted: (MessageRow | null)[] = []
  for (const group of sizedGroups(list)) {
    if (group.length > 1) {
      try {
        inserted.push(...(await insertTogether(trx, stamp, group)))
        continue
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
      }
    }
    for (const fields of group) {
      try {
        inserted.push(await insertMessage(trx, stamp, fields))
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
        inserted.push(null)
      }
    }
  }
  return inserted
}

function sizedGroups(list: MessageFields[]): MessageFields[][] {
  const groups: MessageFields[][] = []
  let group: MessageFields[] = []
  let chars = 0
  for (const fields of list) {
    const size =
      (fields.msg?.length ?? 0) +
      (fields.msg_body?.length ?? 0) +
      (fields.msg_body_html?.length ?? 0)
    if (group.length > 0 && chars + size > MULTI_INSERT_CHARS) {
      groups.push(group)
      group = []
      chars = 0
    }
    group.push(fields)
    chars += size
  }
  if (group.length > 0) groups.push(group)
  return groups
}

async function insertTogether(
  trx: QueryClientContract,
  stamp: number,
  group: MessageFields[]
): Promise<MessageRow[]> {
  const rows = group.map((fields) => stampedRow(stamp, fields))
  const columns = Object.keys(rows[0]) as (keyof (typeof rows)[number])[]
  const tuple = `(${columns.map(() => '?').join(', ')})`
  const returned: { smid: number | string; book_id: number | string; uuid: string }[] =
    await writeQuery(
      trx,
      `INSERT INTO ${TABLES.messages} (${columns.map(quoteId).join(', ')})` +
        ` VALUES ${rows.map(() => tuple).join(', ')} RETURNING smid, book_id, uuid`,
      rows.flatMap((row) => columns.map((column) => row[column]))
    )
  const smidOf = new Map(returned.map((row) => [`${row.book_id}:${row.uuid}`, Number(row.smid)]))
  return rows.map(
    (row) => ({ ...row, smid: smidOf.get(`${row.book_id}:${row.uuid}`)! }) as MessageRow
  )
}

/**
 * Message writes: sendMsg and the socket's send message (new, edit, delete),
 * deleteMsg, and the media plugin's attachments. New messages without an event
 * are group-committed. Events are emitted after the write commits, never on
 * rollback. MessageTransfer (copyOrMoveMessage) builds on the helpers marked
 * as shared.
 */
@inject()
export class MessageWriter {
  constructor(
    private stamps: StampService,
    private access: BookAccessService,
    private counters: BookCountersService,
    private events: EventService,
    private users: UserService,
    private outbox: OutboxService
  ) {}

  /**
   * Inside a message write's transaction: stages `books:message_changed` for
   * the outbox (webhooks), only when a contributor wants this book (a cheap,
   * synchronous check: a book nobody subscribes to costs nothing more).
   * Shared: MessageTransfer stages its copy and its move's removal.
   */
  async stage(
    trx: TransactionClientContract,
    afterCommit: (callback: () => unknown) => void,
    kind: 'created' | 'updated' | 'deleted',
    actor: Actor,
    book: BookRef,
    row: MessageRow,
    stamp: number
  ) {
    if (!this.outbox.wants('books:message_changed', { bookId: book.id })) return
    await this.outbox.stage(
      trx,
      'books:message_changed',
      {
        kind,
        bookId: book.id,
        b_o: book.b_o,
        b_c: book.b_c,
        row,
        actorId: actor.user.id,
        onBehalfOf: actor.onBehalf ? actor.principal.id : null,
        stamp,
      },
      afterCommit
    )
  }

  /**
   * New messages (without an event) waiting for the running transaction.
   * Sends that arrive while a transaction is in flight are inserted together
   * in the next one (group commit): one stamp and one commit — one log flush
   * on MariaDB — for the batch, while each send keeps its own checks, answer
   * and events. A send alone waits for nothing. A batch that fails is retried
   * send by send, so one bad send fails alone.
   */
  private creates = new GroupCommit<PendingCreate, CreatedMessage>({
    batchSize: CREATE_BATCH,
    commit: (batch) => this.insertBatch(batch),
  })

  /**
   * The stamp of the next batch, acquired with the previous batch's watermark (one Redis round
   * trip for both) when sends were waiting: taken by the next insertBatch, which the group commit
   * starts in the same turn; released on the next turn if none did.
   */
  private nextStamp: number | null = null

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
      .where('bm.user_id', actor.user.id)
      .where('bm.invite', 'accepted')
      .where('bm.del', false)
      .where('b.del', false)
      .where('b.code', code)
      .limit(2)
      .select('b.owner_id')
    if (shared.length !== 1) throw rpcError('NOT_FOUND', 'Book not found')
    const ownerId = Number(shared[0].owner_id)
    const owners = await this.users.codesOf([ownerId])
    const ownerCode = owners.get(ownerId)
    if (!ownerCode) throw rpcError('NOT_FOUND', 'Book not found')
    return this.access.resolveFor(actor, ownerCode, code, 'write')
  }

  /**
   * A new message and another plugin's rows in one transaction (inbound
   * mail: its files and its log row). `within` runs after the message's
   * insert; whatever fails, nothing of either is written.
   */
  createWithin(actor: Actor, input: SendInput, within: WithinCreate): Promise<SendResult> {
    this.checkLengths(input)
    return this.create(actor, input, within)
  }

  private async create(actor: Actor, input: SendInput, within?: WithinCreate): Promise<SendResult> {
    const msg = input.msg ?? ''
    const hasContent =
      msg.trim() !== '' ||
      Boolean(input.body) ||
      Boolean(input.bodyHtml) ||
      (input.nbMedias ?? 0) > 0 ||
      (input.nbDocs ?? 0) > 0
    // A plain new message naming its book's owner: nothing below can fail before the book's
    // check, so the book is resolved and checked with the other sends of its batch (one
    // statement for the batch instead of one round trip per send on MariaDB), same answers.
    const target =
      !within &&
      hasContent &&
      !input.uuid?.trim() &&
      (input.event === undefined || input.event === '')
        ? this.namedTarget(actor, input)
        : null
    const book = target ? null : await this.targetBook(actor, input)
    const uuid = input.uuid?.trim() || randomUUID()
    if (!UUID.test(uuid)) {
      throw rpcError(
        'INVALID_PARAMETER',
        'Invalid parameter uuid: 1 to 64 letters, digits or . : @ + - _',
        { field: 'uuid' }
      )
    }
    if (!hasContent) throw rpcError('MISSING_PARAMETER', 'Missing parameter: msg')
    if (!book) {
      const created = await this.creates.submit({
        actor,
        book: null,
        target: target!,
        fields: this.newFields(actor, 0, uuid, input, msg, false),
      })
      if (created.row) {
        return this.result(created.book, created.row, actor.user.code, null, true, created.sstamp)
      }
      // A uuid made here already taken: answered as below.
      return this.taken(actor, created.book, uuid)
    }
    const event = await this.events.parse(input.event, book)

    // A uuid chosen by the client may be a resend; one made here is new.
    if (input.uuid?.trim()) {
      const known = await this.byUuid(book.id, uuid)
      if (known) return this.resend(actor, book, known)
    }

    const creator = actor.user
    const fields = this.newFields(actor, book.id, uuid, input, msg, Boolean(event))
    try {
      if (event || within) {
        const row = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
          let inserted = await insertMessage(trx, stamp, fields)
          if (within) {
            const changes = await within(trx, inserted)
            await trx.from(TABLES.messages).where('smid', inserted.smid).update(changes)
            inserted = { ...inserted, ...changes }
          }
          if (event) await this.events.save(trx, stamp, inserted, event)
          await this.stage(trx, afterCommit, 'created', actor, book, inserted, stamp)
          afterCommit(() => this.afterCreate(actor, book, inserted, event ?? null))
          return inserted
        })
        return this.result(book, row, creator.code, event ?? null, true)
      }
      const created = await this.creates.submit({ actor, book, fields })
      if (created.row) {
        return this.result(book, created.row, creator.code, null, true, created.sstamp)
      }
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
    }
    return this.taken(actor, book, uuid)
  }

  /** The book a send names with its owner (b_o, or the session's book owner), else null. */
  private namedTarget(actor: Actor, input: SendInput): { b_o: string; b_c: string } | null {
    const restrictions = actor.restrictions
    const code = input.b_c?.trim() || restrictions.carnet_code || firstWord(input.msg)
    const owner = input.b_o?.trim() || restrictions.carnet_owner || ''
    return code && owner ? { b_o: owner, b_c: code } : null
  }

  private newFields(
    actor: Actor,
    bookId: number,
    uuid: string,
    input: SendInput,
    msg: string,
    hasEvent: boolean
  ): MessageFields {
    return {
      book_id: bookId,
      uuid,
      creator_id: actor.user.id,
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
      has_event: hasEvent,
      del: false,
    }
  }

  /** The same uuid sent twice at once: the second insert loses, and answers the first. */
  private async taken(actor: Actor, book: BookRef, uuid: string): Promise<SendResult> {
    const winner = await this.byUuid(book.id, uuid)
    if (winner) return this.resend(actor, book, winner)
    throw rpcError('CONFLICT', 'Another message of this book already has this uuid', {
      field: 'uuid',
    })
  }

  /**
   * Commits one batch of new messages in one transaction: each job's row and
   * the watermark after the commit (one read for the batch), or null when a
   * message of that book already has the job's uuid (only that statement
   * failed: both databases roll back the statement, not the transaction).
   * Any other failure throws, and GroupCommit retries each job alone.
   */
  private async insertBatch(batch: PendingCreate[]): Promise<Settled<CreatedMessage>[]> {
    const given = this.nextStamp
    this.nextStamp = null
    let written = false
    // The books of the sends that name theirs, resolved and checked together (see create).
    const refused = new Map<PendingCreate, unknown>()
    const books = new Map<PendingCreate, BookRef>()
    const unresolved = batch.filter((job) => !job.book)
    const resolved = unresolved.length
      ? await this.access
          .resolveManyFor(
            unresolved.map((job) => ({ actor: job.actor, ...job.target!, need: 'write' as const }))
          )
          .catch(async (error) => {
            if (given) await this.stamps.release(given)
            throw error
          })
      : []
    unresolved.forEach((job, index) => {
      const outcome = resolved[index]
      if (outcome instanceof Error) refused.set(job, outcome)
      else books.set(job, outcome)
    })
    for (const job of batch) if (job.book) books.set(job, job.book)
    const writing = batch.filter((job) => !refused.has(job))
    const inserted = new Map<PendingCreate, MessageRow | null>()
    if (!writing.length && given) await this.stamps.release(given)
    if (writing.length) {
      written = true
      const list = writing.map((job) => ({ ...job.fields, book_id: books.get(job)!.id }))
      const staging = await this.mayStageCreated(list).catch(async (error) => {
        if (given) await this.stamps.release(given)
        throw error
      })
      const work = async (client: QueryClientContract, scope: Omit<WriteScope, 'trx'>) => {
        const { stamp, afterCommit } = scope
        inserted.clear() // a retried transaction starts over
        const rows = await insertMessages(client, stamp, list)
        for (const [index, job] of writing.entries()) {
          const row = rows[index]
          const book = books.get(job)!
          inserted.set(job, row)
          if (!row) continue
          if (staging)
            await this.stage(
              client as TransactionClientContract,
              afterCommit,
              'created',
              job.actor,
              book,
              row,
              stamp
            )
          afterCommit(() => this.afterCreate(job.actor, book, row, null))
        }
      }
      // Staging contributors (push, copies, reminders, webhooks) use plain statements only: the
      // transaction is begun and committed on the driver, without knex's.
      if (staging) await this.stamps.writeNative(({ trx, ...scope }) => work(trx, scope), given)
      else await this.stamps.writeStatement(({ client, ...scope }) => work(client, scope), given)
    }
    let sstamp = 0
    try {
      if (written && this.creates.waiting > 0) {
        const next = await this.stamps.watermarkAndAcquire()
        sstamp = next.watermark
        if (next.stamp) this.handOver(next.stamp)
      } else if (written) sstamp = await this.stamps.watermark()
    } catch (error) {
      // The batch has committed: each send fails, none is written again.
      return batch.map((job) => ({ ok: false as const, error: refused.get(job) ?? error }))
    }
    return batch.map((job) =>
      refused.has(job)
        ? { ok: false as const, error: refused.get(job) }
        : {
            ok: true as const,
            value: { book: books.get(job)!, row: inserted.get(job) ?? null, sstamp },
          }
    )
  }

  /**
   * Whether a batch's new messages need a transaction: more than one INSERT (sizedGroups), or
   * a book for which a contributor to books' in-transaction topic may stage deliveries (asked
   * before, on committed data: webhooks subscribed to it, a member who wants copies). Without
   * one, the batch is its INSERT alone, run as a single statement: BEGIN, COMMIT and the
   * contributors' reads inside the transaction were 3 of a batch's 5 round trips on MariaDB,
   * and every send of the batch waits for them.
   */
  private async mayStageCreated(list: MessageFields[]): Promise<boolean> {
    if (sizedGroups(list).length > 1) return true
    const byBook = new Map(list.map((fields) => [fields.book_id, fields]))
    const answers = await Promise.all(
      [...byBook].map(([bookId, fields]) =>
        this.outbox.mayStage('books:message_changed', {
          bookId,
          kind: 'created',
          // The row as far as it is known before its insert (no smid yet).
          row: stampedRow(0, fields) as MessageRow,
        })
      )
    )
    return answers.some(Boolean)
  }

  /** Keeps `stamp` for the next batch; released on the next turn if no batch took it. */
  private handOver(stamp: number) {
    if (this.nextStamp) void this.stamps.release(this.nextStamp)
    this.nextStamp = stamp
    setImmediate(() => {
      if (this.nextStamp !== stamp) return
      this.nextStamp = null
      void this.stamps.release(stamp)
    })
  }

  /** Shared: counters and the message_created event of a new (or copied) message. */
  async afterCreate(
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

  /** Shared: a deleted message as clients receive it: identity, stamps and del true, no content. */
  async deletedWire(row: MessageRow, stamp: number, actor: Actor) {
    const deleted = { ...row, del: true, sstamp: stamp, last_modified: nowSeconds() }
    return serializeMessage(deleted, {
      u_c: await this.codeOf(Number(row.creator_id), actor),
    }) as any
  }

  private async codeOf(userId: number, actor: Actor) {
    const id = Number(userId)
    if (id === actor.user.id) return actor.user.code
    const codes = await this.users.codesOf([id])
    return codes.get(id) ?? ''
  }

  /** Shared: the live event of a message, with its participants. */
  async eventOf(smid: number) {
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
    event: EventInput | MessageEventView | null,
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

  /**
   * Shared: the message and its book, checked against b_o/b_c when given;
   * NOT_FOUND when not visible.
   */
  async locate(actor: Actor, input: { smid?: number; uuid?: string; b_o?: string; b_c?: string }) {
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

  /** Shared: edit and delete need the creator with RIGHT_READWRITE, or anyone with RIGHT_READWRITEDELETE. */
  async assertCanChange(actor: Actor, book: BookRef, row: MessageRow) {
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
      await this.stage(trx, afterCommit, 'updated', actor, book, fresh, stamp)
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
      const deleted = await this.markDeleted(trx, stamp, book.id, row)
      if (!deleted) return
      await this.stage(trx, afterCommit, 'deleted', actor, book, deleted, stamp)
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
   * Shared: deletes inside a write. The book row is locked first, as the
   * counters' refresh() does, so the message is taken out of whichever
   * counter part holds it. Answers the row as deleted, or null when it
   * already was.
   */
  async markDeleted(
    trx: TransactionClientContract,
    stamp: number,
    bookId: number,
    row: MessageRow
  ): Promise<MessageRow | null> {
    const book = await trx
      .from(TABLES.books)
      .where('id', bookId)
      .forUpdate()
      .select('counted_until')
      .first()
    const changes = { del: true, sstamp: stamp, last_modified: nowSeconds() }
    const changed = await trx
      .from(TABLES.messages)
      .where('smid', row.smid)
      .where('del', false)
      .update(changes)
    if (!Number(changed)) return null
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
    return { ...row, ...changes }
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
        const creatorId = Number(fresh.creator_id)
        const codes = await this.users.codesOf([creatorId])
        await emitter.emit('books:message_updated', {
          book,
          message: serializeMessage(fresh, { u_c: codes.get(creatorId) ?? '' }) as any,
          creatorId,
          actorId: creatorId,
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
