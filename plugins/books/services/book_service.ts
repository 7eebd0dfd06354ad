import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { readCached, readCachedNow } from '#core/native_sql'
import { StampService } from '#core/services/stamp_service'
import { AuditLog, auditActorOf } from '#core/audit/audit_log'
import { isUniqueViolation } from '#core/services/db_errors'
import { DEFAULT_RIGHTS, UserService } from '#core/services/user_service'
import type User from '#models/user'
import { TABLES, type BookRow, type MemberRow } from '../models/records.js'
import { OWNER_PREF_KINDS, USER_PREF_KINDS, parseJson, readPrefChanges } from '../models/prefs.js'
import { RIGHT_OWNER } from '../rights.js'
import type { BookView, ContactView } from '../serializers/book_serializer.js'
import { BookAccessService, bookOf, type BookRef } from './book_access_service.js'
import { BookCountersService } from './book_counters_service.js'
import {
  counterTails,
  countsFor,
  lastMessages,
  bookMessageHeads,
  membersOf,
} from './book_queries.js'
import booksConfig from '../config.js'
import '../events.js'

/** countBooks' statement, made once (readCached keys its results by the text). */
const COUNT_BOOKS_SQL = `SELECT COUNT(*) AS total FROM ${TABLES.members} bm JOIN ${TABLES.books} b
  ON b.id = bm.book_id WHERE bm.user_id = ? AND bm.del = 0 AND b.del = 0`
const booksTotal = ([row]: Record<string, unknown>[]) => Number(row?.total ?? 0)

/** A book code: no slash or space (it appears in media URL paths), at most 100 characters. */
export const BOOK_CODE = /^[\p{L}\p{N}._@+-]{1,100}$/u

export interface BookListing {
  books: BookView[]
  nbBooks: number
  contacts: ContactView[]
  nbContacts: number
}

type JoinedMemberRow = MemberRow & {
  owner_id: number
  book_code: string
  description: string
  owner_prefs: string | null
  fp_form: string | null
  archived: number | boolean
  book_del: number | boolean
  last_media: number
  nb_msgs: number
  counted_until: number
  book_sstamp: number
  owner_code: string
}

const badBooks = () =>
  rpcError('INVALID_PARAMETER', 'Invalid parameter books: expected {b_o, b_c} or "b_o/b_c"', {
    field: 'books',
  })

/** An object or array where a scalar is expected (bracket form makes objects String() cannot convert). */
const isNested = (value: unknown) => value !== null && typeof value === 'object'

const userHasRight = (user: User, right: string) =>
  ({ ...DEFAULT_RIGHTS, ...user.rights })[right] === true

/** How the audit log names a book: its owner's code / its code. */
const bookTarget = (book: BookRef) => ({
  type: 'book',
  id: book.id,
  label: `${book.b_o}/${book.b_c}`,
})

/** Books: listing (getAllBooks, getBookInfo), creation, owner settings, archive, per-member prefs. */
@inject()
export class BookService {
  constructor(
    private stamps: StampService,
    private access: BookAccessService,
    private counters: BookCountersService,
    private users: UserService,
    private audit: AuditLog
  ) {}

  private joinedMembers(userId: number) {
    return db
      .from(`${TABLES.members} as bm`)
      .join(`${TABLES.books} as b`, 'b.id', 'bm.book_id')
      .join('users as o', 'o.id', 'b.owner_id')
      .where('bm.user_id', userId)
      .select(
        'bm.*',
        'b.owner_id',
        'b.code as book_code',
        'b.description',
        'b.owner_prefs',
        'b.fp_form',
        'b.archived',
        'b.del as book_del',
        'b.last_media',
        'b.nb_msgs',
        'b.counted_until',
        'b.sstamp as book_sstamp',
        'o.code as owner_code'
      )
  }

  /**
   * getAllBooks: the user's books (invited or accepted). With `sstamp`, only
   * books changed after it — the book, the user's membership or any of its
   * messages — including books the user left or lost, answered with del true.
   */
  async listFor(
    actor: Actor,
    filter: { sstamp?: number; b_o?: string; b_c?: string }
  ): Promise<BookListing> {
    const user = actor.user
    const query = this.joinedMembers(user.id).orderBy('bm.book_id')
    const since = filter.sstamp
    if (since === undefined) {
      query.where('bm.del', false).where('b.del', false)
    } else {
      query.where((scope) =>
        scope
          .where((live) => live.where('bm.del', false).where('b.del', false))
          .orWhere('bm.sstamp', '>', since)
          .orWhere('b.sstamp', '>', since)
      )
    }
    const restrictions = actor.restrictions
    const code = restrictions.carnet_code ?? filter.b_c
    const owner = restrictions.carnet_owner ?? filter.b_o
    if (restrictions.carnet_code && filter.b_c && filter.b_c !== restrictions.carnet_code)
      return this.empty()
    if (code) query.where('b.code', code)
    if (owner) query.where('o.code', owner)

    const rows = (await query) as JoinedMemberRow[]
    const views = await this.views(actor, rows)
    const books = since === undefined ? views : views.filter((view) => view.sstamp > since)

    const contacts = await this.contactsOf(user.id, since)
    const nbBooks =
      code || owner || since !== undefined ? await this.countBooks(user.id) : books.length
    return { books, nbBooks, contacts: contacts.list, nbContacts: contacts.total }
  }

  private empty(): BookListing {
    return { books: [], nbBooks: 0, contacts: [], nbContacts: 0 }
  }

  /** getBookInfo: one book the user is invited to or a member of. */
  async infoFor(actor: Actor, b_o: string, b_c: string): Promise<BookView> {
    const { book } = await this.membershipFor(actor, b_o, b_c)
    const rows = (await this.joinedMembers(actor.user.id).where(
      'bm.book_id',
      book.id
    )) as JoinedMemberRow[]
    const [view] = await this.views(actor, rows)
    return view
  }

  /** Builds the views of many books with a fixed number of queries. */
  private async views(actor: Actor, rows: JoinedMemberRow[]): Promise<BookView[]> {
    if (rows.length === 0) return []
    const live = rows.filter((row) => !row.del && !row.book_del)
    const liveIds = live.map((row) => Number(row.book_id))
    const readable = live.filter((row) => row.invite === 'accepted')
    const readableIds = readable.map((row) => Number(row.book_id))

    const heads = await bookMessageHeads(rows.map((row) => Number(row.book_id)))
    const stamps = new Map([...heads].map(([bookId, head]) => [bookId, head.maxStamp]))
    // A book whose newest message stamp is not past counted_until has no tail to count.
    const withTail = readable.filter(
      (row) => (stamps.get(Number(row.book_id)) ?? 0) > Number(row.counted_until)
    )
    const [members, lasts, tails] = await Promise.all([
      membersOf(liveIds),
      lastMessages(
        readableIds.map((bookId) => heads.get(bookId)?.lastSmid ?? 0),
        this.users
      ),
      counterTails(
        withTail.map((row) => ({
          id: Number(row.book_id),
          counted_until: Number(row.counted_until),
        }))
      ),
    ])

    const showMessages = !actor.restrictions.hideMessages
    return rows.map((row) => {
      const bookId = Number(row.book_id)
      const tail = tails.get(bookId) ?? []
      if (tail.length > booksConfig.tailRefreshThreshold) this.counters.schedule(bookId)
      const counts = countsFor({ nb_msgs: row.nb_msgs }, row, tail)
      const book: BookRow = {
        id: bookId,
        owner_id: row.owner_id,
        code: row.book_code,
        description: row.description,
        owner_prefs: row.owner_prefs,
        fp_form: row.fp_form,
        archived: row.archived,
        del: row.book_del,
        last_media: row.last_media,
        nb_msgs: row.nb_msgs,
        counted_until: row.counted_until,
        sstamp: row.book_sstamp,
      }
      return {
        book,
        ownerCode: row.owner_code,
        viewerCode: actor.user.code,
        member: row,
        members: (members.get(bookId) ?? []).map(({ u_c, invite, right }) => ({
          u_c,
          invite,
          right,
        })),
        lastMsg: lasts.get(bookId) ?? null,
        nbMsgs: counts.nbMsgs,
        nbNotRead: counts.nbNotRead,
        sstamp: Math.max(Number(row.book_sstamp), Number(row.sstamp), stamps.get(bookId) ?? 0),
        gone: Boolean(row.del) || Boolean(row.book_del),
        showMessages: showMessages && row.invite === 'accepted',
      }
    })
  }

  /** Contacts of the user; with `since`, only those changed after it (contact link or the user's names). */
  private async contactsOf(userId: number, since?: number) {
    const query = db
      .from(`${TABLES.contacts} as c`)
      .join('users as u', 'u.id', 'c.contact_id')
      .where('c.user_id', userId)
      .orderBy('u.code')
      .select(
        'u.code',
        'u.first_name',
        'u.last_name',
        'u.sstamp as user_sstamp',
        'c.sstamp',
        'c.is_confirmed'
      )
    const rows = await query
    const list = rows
      .map((row) => ({
        u_c: row.code,
        firstName: row.first_name,
        lastName: row.last_name,
        sstamp: Math.max(Number(row.sstamp), Number(row.user_sstamp)),
        isConfirmed: Boolean(row.is_confirmed),
      }))
      .filter((contact) => since === undefined || contact.sstamp > since)
    return { list, total: rows.length }
  }

  /** Books the user is invited to or a member of (userInfo.nbBooks, allBooks.nbBooks). */
  async countBooks(userId: number): Promise<number> {
    return booksTotal(await readCached(COUNT_BOOKS_SQL, [userId]))
  }

  /** countBooks without waiting where the read needs none (SQLite), else null: getUserInfo asks on every call. */
  countBooksNow(userId: number): number | null {
    const rows = readCachedNow(COUNT_BOOKS_SQL, [userId])
    return rows && booksTotal(rows)
  }

  /**
   * The user's live membership (invited or accepted) of a book; NOT_FOUND
   * otherwise, as for a book that does not exist.
   */
  async membershipFor(actor: Actor, b_o: string, b_c: string) {
    const book = await this.access.resolve(b_o, b_c)
    if (!book) {
      if (!this.access.allows(actor, { b_o, b_c })) {
        throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
      }
      throw rpcError('NOT_FOUND', 'Book not found')
    }
    this.access.assertRestrictions(actor, book, 'read')
    const member = (await db
      .from(TABLES.members)
      .where('book_id', book.id)
      .where('user_id', actor.user.id)
      .where('del', false)
      .first()) as MemberRow | null
    if (!member) throw rpcError('NOT_FOUND', 'Book not found')
    return { book, member }
  }

  /** createBook (extension): the actor owns the new book and is its first member (right 4). */
  async create(
    actor: Actor,
    input: {
      b_c: string
      title?: string
      description?: string
      ownerPrefs?: Record<string, unknown>
    }
  ) {
    if (actor.restrictions.carnet_code)
      throw rpcError('RESTRICTED_SESSION', 'This session is restricted to one book')
    if (!userHasRight(actor.user, 'createBooks'))
      throw rpcError('FORBIDDEN', 'You may not create books')
    const code = input.b_c.trim()
    if (!BOOK_CODE.test(code)) {
      throw rpcError(
        'INVALID_PARAMETER',
        'Invalid parameter b_c: letters, digits and . _ @ + - only, at most 100',
        {
          field: 'b_c',
        }
      )
    }
    const prefs = this.ownerPrefChanges(input.ownerPrefs ?? {})
    prefs.title = input.title?.trim() || (typeof prefs.title === 'string' && prefs.title) || code
    const user = actor.user
    try {
      return await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
        const now = new Date()
        const [id] = await trx.table(TABLES.books).insert({
          owner_id: user.id,
          code,
          description: input.description ?? '',
          owner_prefs: JSON.stringify(prefs),
          archived: false,
          del: false,
          last_media: 0,
          nb_msgs: 0,
          counted_until: 0,
          sstamp: stamp,
          created_at: now,
          updated_at: now,
        })
        await trx.table(TABLES.members).insert({
          book_id: id,
          user_id: user.id,
          invite: 'accepted',
          right: RIGHT_OWNER,
          invited_by: null,
          user_prefs: '{}',
          favorite: false,
          sort_order: 0,
          last_msg_read: 0,
          nb_not_read: 0,
          del: false,
          sstamp: stamp,
          created_at: now,
          updated_at: now,
        })
        const ref: BookRef = {
          id: Number(id),
          b_o: user.code,
          b_c: code,
          ownerId: user.id,
          archived: false,
        }
        afterCommit(() =>
          emitter.emit('books:book_updated', { book: ref, changes: ['created'], actorId: user.id })
        )
        return ref
      })
    } catch (error) {
      if (isUniqueViolation(error))
        throw rpcError('CONFLICT', `You already have a book with the code ${code}`)
      throw error
    }
  }

  private ownerPrefChanges(changes: Record<string, unknown>) {
    const { valid, invalid } = readPrefChanges(OWNER_PREF_KINDS, changes)
    if (invalid.length > 0) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter ownerPrefs: unknown key or wrong type: ${invalid.join(', ')}`,
        {
          field: 'ownerPrefs',
        }
      )
    }
    return valid
  }

  /** updateBook (extension): title, description and owner prefs; RIGHT_ADMIN. */
  async update(
    actor: Actor,
    b_o: string,
    b_c: string,
    input: { title?: string; description?: string; ownerPrefs?: Record<string, unknown> }
  ) {
    const book = await this.access.resolveFor(actor, b_o, b_c, 'admin')
    const changes = this.ownerPrefChanges(input.ownerPrefs ?? {})
    if (input.title !== undefined) changes.title = input.title
    if (typeof changes.title === 'string' && changes.title.trim() === '') {
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter title: it may not be empty', {
        field: 'title',
      })
    }
    const changed = Object.keys(changes)
    if (input.description !== undefined) changed.push('description')
    if (changed.length === 0)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: title, description or ownerPrefs')

    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const row = await trx
        .from(TABLES.books)
        .where('id', book.id)
        .forUpdate()
        .select('owner_prefs')
        .first()
      const prefs = { ...parseJson<Record<string, unknown>>(row?.owner_prefs, {}), ...changes }
      const update: Record<string, unknown> = {
        owner_prefs: JSON.stringify(prefs),
        sstamp: stamp,
        updated_at: new Date(),
      }
      if (input.description !== undefined) update.description = input.description.slice(0, 2000)
      await trx.from(TABLES.books).where('id', book.id).update(update)
      afterCommit(() =>
        emitter.emit('books:book_updated', { book, changes: changed, actorId: actor.user.id })
      )
    })
    return book
  }

  /** archiveBook / unarchiveBook (extensions): RIGHT_ADMIN; an archived book is read-only. */
  async setArchived(actor: Actor, b_o: string, b_c: string, archived: boolean) {
    const book = await this.access.resolveFor(actor, b_o, b_c, 'admin')
    if (book.archived === archived) return { ...book }
    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      await trx
        .from(TABLES.books)
        .where('id', book.id)
        .update({ archived, sstamp: stamp, updated_at: new Date() })
      await this.audit.record(
        {
          actor: auditActorOf(actor),
          kind: archived ? 'book.archived' : 'book.unarchived',
          target: bookTarget(book),
          changes: { archived: { from: Boolean(book.archived), to: archived } },
        },
        trx
      )
      afterCommit(() =>
        emitter.emit('books:book_updated', {
          book: { ...book, archived },
          changes: [archived ? 'archived' : 'unarchived'],
          actorId: actor.user.id,
        })
      )
    })
    return { ...book, archived }
  }

  /**
   * Deletes a book (the admin console): RIGHT_ADMIN. The book is marked
   * deleted, so members syncing with a stamp learn it is gone (del true),
   * and its messages are no longer served.
   */
  async delete(actor: Actor, b_o: string, b_c: string) {
    const book = await this.access.resolveFor(actor, b_o, b_c, 'admin')
    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      await trx
        .from(TABLES.books)
        .where('id', book.id)
        .update({ del: true, sstamp: stamp, updated_at: new Date() })
      await this.audit.record(
        {
          actor: auditActorOf(actor),
          kind: 'book.deleted',
          target: bookTarget(book),
          changes: { deleted: { from: false, to: true } },
        },
        trx
      )
      afterCommit(() =>
        emitter.emit('books:book_updated', {
          book,
          changes: ['deleted'],
          actorId: actor.user.id,
        })
      )
    })
    return book
  }

  /**
   * updateBookUserPrefs (extension), and the socket's updateBookParam: the
   * member's own prefs, favorite and order. Only the member's row changes.
   */
  async updateUserPrefs(
    actor: Actor,
    b_o: string,
    b_c: string,
    input: { userPrefs?: Record<string, unknown>; favorite?: boolean; order?: number }
  ) {
    const { book, member } = await this.membershipFor(actor, b_o, b_c)
    const { valid, invalid } = readPrefChanges(USER_PREF_KINDS, input.userPrefs ?? {})
    if (invalid.length > 0) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter userPrefs: unknown key or wrong type: ${invalid.join(', ')}`,
        {
          field: 'userPrefs',
        }
      )
    }
    if (typeof valid.maxMsgsOffline === 'number' && (valid.maxMsgsOffline as number) < 0) {
      throw rpcError(
        'INVALID_PARAMETER',
        'Invalid parameter maxMsgsOffline: it may not be negative',
        { field: 'maxMsgsOffline' }
      )
    }
    if (
      Object.keys(valid).length === 0 &&
      input.favorite === undefined &&
      input.order === undefined
    ) {
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: userPrefs, favorite or order')
    }
    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const row = await trx
        .from(TABLES.members)
        .where('id', member.id)
        .forUpdate()
        .select('user_prefs')
        .first()
      const update: Record<string, unknown> = {
        user_prefs: JSON.stringify({
          ...parseJson<Record<string, unknown>>(row?.user_prefs, {}),
          ...valid,
        }),
        sstamp: stamp,
        updated_at: new Date(),
      }
      if (input.favorite !== undefined) update.favorite = input.favorite
      if (input.order !== undefined) update.sort_order = input.order
      await trx.from(TABLES.members).where('id', member.id).update(update)
      afterCommit(() =>
        emitter.emit('books:member_changed', {
          book,
          userId: actor.user.id,
          u_c: actor.user.code,
          change: 'prefs',
          invite: member.invite,
          right: Number(member.right),
          del: false,
          actorId: actor.user.id,
        })
      )
    })
    return book
  }

  /**
   * markBooksMessagesAsRead: one book (b_o, b_c, optional smid = read up to
   * that message), several (`books`: {b_o, b_c} objects or "b_o/b_c"
   * strings), or, with neither, every book the user has accepted (a
   * restricted session: its book). Each must be readable.
   */
  async markRead(
    actor: Actor,
    input: { b_o?: string; b_c?: string; smid?: number; books?: unknown[] }
  ) {
    let targets: { b_o: string; b_c: string }[]
    const listed = input.books ?? []
    if (input.b_c || actor.restrictions.carnet_code) {
      targets = [bookOf(actor, input)]
    } else if (listed.length > 0) {
      targets = listed.map((item) => {
        if (item && typeof item === 'object') {
          const entry = item as Record<string, unknown>
          if (isNested(entry.b_o) || isNested(entry.b_c)) throw badBooks()
          return bookOf(actor, {
            b_o: String(entry.b_o ?? '').trim(),
            b_c: String(entry.b_c ?? '').trim(),
          })
        }
        const [owner, code] = String(item).split('/')
        if (!code) throw badBooks()
        return { b_o: owner.trim(), b_c: code.trim() }
      })
    } else {
      const listing = await this.listFor(actor, {})
      targets = listing.books
        .filter((view) => view.member.invite === 'accepted')
        .map((view) => ({ b_o: view.ownerCode, b_c: view.book.code }))
    }

    const marked = []
    for (const target of targets) {
      const book = await this.access.resolveFor(actor, target.b_o, target.b_c, 'read')
      const { lastMsgRead } = await this.counters.markRead(
        actor,
        book,
        targets.length === 1 ? input.smid : undefined
      )
      marked.push({ b_o: book.b_o, b_c: book.b_c, lastMsgRead })
    }
    return marked
  }

  /** The tables plugin reports the book's form (fpForm: id, name, lastModified). */
  async setFpForm(bookId: number, form: { id: number; name: string; lastModified: number } | null) {
    await this.touchBook(bookId, { fp_form: form ? JSON.stringify(form) : null }, 'fpForm')
  }

  /** The media plugin reports the last image posted in the book (cover "last image"). */
  async setLastMedia(bookId: number, mediaId: number) {
    await this.touchBook(bookId, { last_media: mediaId }, 'lastMedia')
  }

  private async touchBook(bookId: number, update: Record<string, unknown>, change: string) {
    const book = await this.access.findById(bookId)
    if (!book) throw rpcError('NOT_FOUND', 'Book not found')
    await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      await trx
        .from(TABLES.books)
        .where('id', bookId)
        .update({ ...update, sstamp: stamp, updated_at: new Date() })
      afterCommit(() =>
        emitter.emit('books:book_updated', { book, changes: [change], actorId: null })
      )
    })
  }
}
