import { createHash } from 'node:crypto'
import type { FileRef, LocalClient } from './interface_client.js'
import { InterfaceError } from './interface_client.js'
import { ApiSource } from './transfer_source.js'
import type {
  SourceBook,
  SourceMessage,
  SourceRow,
  SourceTables,
  TransferSource,
} from './transfer_source.js'
import { emptyBookState, type BookState, type TransferState } from './transfer_state.js'

/** Field types whose cells are computed or kept elsewhere: never written as values. */
const COMPUTED = new Set([
  'autoincrement',
  'lookup',
  'rollup',
  'formula',
  'smarttext',
  'created_time',
  'modified_time',
  'created_by',
  'modified_by',
  'comments',
  'activity',
])
/** Field types made after the others: they name other tables or fields. */
const LATE = new Set(['link', 'lookup', 'rollup', 'formula', 'smarttext'])

/** Rows written per createOrUpdateTableRows call. */
const ROW_BATCH = 100
/** Messages copied between two saves of the state file (a resend of a uuid is answered, not doubled). */
const MESSAGE_SAVE_EVERY = 25
/** The highest right an invitation carries (the owner's right stays the local owner's). */
const MAX_INVITED_RIGHT = 3

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i
const int = (value: unknown) => Number(value ?? 0) || 0

/** Thrown when --stop-after's count of writes is reached: the state is saved, a later run continues. */
export class TransferStopped extends Error {
  constructor(readonly writes: number) {
    super(`stopped after ${writes} writes`)
  }
}

export interface TransferProgress {
  book: string
  phase: string
  done: number
  total: number
}

export interface TransferReport {
  books: number
  counts: Record<string, number>
  /** What could not be copied, one line each. */
  problems: string[]
  /** Local books written, source key -> local b_o/b_c. */
  mapping: Record<string, { b_o: string; b_c: string }>
}

function digest(value: unknown) {
  return createHash('sha1').update(JSON.stringify(value)).digest('hex').slice(0, 16)
}

const describe = (error: unknown) =>
  error instanceof InterfaceError ? `${error.req} ${error.code}: ${error.reason}` : String(error)

/**
 * Copies books from a source (a server speaking the interface, or an archive) into this
 * server as one local user, through the interface's own operations run in process
 * (LocalClient): books, members as invitations, messages with their files and events, tables
 * with fields, views, tabs, rows, file cells and comments. Source ids are mapped to local ids
 * in the state file, so a run continues an interrupted one and a later run writes only what
 * changed: messages by their sstamp, rows by a digest of their values, comment threads by the
 * cell's summary stamp.
 */
export class BookImporter {
  readonly report: TransferReport = { books: 0, counts: {}, problems: [], mapping: {} }
  private writes = 0
  /** The state's key of the book being copied (the rows journal names it). */
  private bookKey = ''
  private stopRequested = false

  constructor(
    private source: TransferSource,
    private local: LocalClient,
    private state: TransferState,
    private options: {
      stopAfter?: number
      progress?: (progress: TransferProgress) => void
      /** The source account's own user code: not invited (the local user takes its place). */
      sourceUser?: string
    } = {}
  ) {}

  /**
   * Stops after the write under way, its mapping saved (the commands call it on SIGINT:
   * Ctrl-C interrupts between two writes, never between a write and its record).
   */
  requestStop() {
    this.stopRequested = true
  }

  async run() {
    const books = await this.source.books()
    for (const book of books) if (!book.del && book.accepted) await this.copyBook(book)
    await this.state.save()
    await this.state.compact()
    return this.report
  }

  private count(what: string, by = 1) {
    this.report.counts[what] = (this.report.counts[what] ?? 0) + by
  }

  private problem(line: string) {
    this.report.problems.push(line)
  }

  /** One more write; at --stop-after the state is saved and the run stops. */
  private async wrote(what: string, by = 1) {
    this.count(what, by)
    this.writes += by
    const reached = this.options.stopAfter && this.writes >= this.options.stopAfter
    if (reached || this.stopRequested) {
      await this.state.save()
      throw new TransferStopped(this.writes)
    }
  }

  private progress(book: SourceBook, phase: string, done: number, total: number) {
    this.options.progress?.({ book: `${book.b_o}/${book.b_c}`, phase, done, total })
  }

  private async copyBook(book: SourceBook) {
    const key = `${book.b_o}/${book.b_c}`
    this.bookKey = key
    let bookState = this.state.data.books[key]
    const about = digest([book.title, book.description])
    if (!bookState) {
      bookState = emptyBookState(await this.createBook(book))
      bookState.about = about
      this.state.data.books[key] = bookState
      await this.state.save()
      await this.wrote('books')
    } else if (bookState.about !== about) {
      try {
        await this.local.call('updateBook', {
          ...bookState.local,
          title: book.title || book.b_c,
          description: book.description,
        })
        bookState.about = about
        await this.wrote('books updated')
      } catch (error) {
        if (error instanceof TransferStopped) throw error
        this.problem(`book ${key}: title and description not updated (${describe(error)})`)
      }
    }
    this.report.books++
    this.report.mapping[key] = bookState.local
    await this.copyMembers(book, bookState)
    await this.copyMessages(book, bookState)
    await this.copyTables(book, bookState)
    bookState.sstamp = book.sstamp
    bookState.complete = true
    await this.state.save()
  }

  /** A new local book with the source's code; a code the local user already has gets a suffix. */
  private async createBook(book: SourceBook) {
    const ownerPrefs: Record<string, unknown> = {}
    for (const name of ['oCoverColor', 'authorizeMemberBroadcast', 'acceptExternalMsg']) {
      if (book.ownerPrefs[name] !== undefined) ownerPrefs[name] = book.ownerPrefs[name]
    }
    for (let attempt = 1; attempt <= 20; attempt++) {
      const code = attempt === 1 ? book.b_c : `${book.b_c}-${attempt}`
      try {
        const answer = await this.local.call('createBook', {
          b_c: code,
          title: book.title || book.b_c,
          description: book.description || undefined,
          ownerPrefs,
        })
        if (attempt > 1)
          this.problem(`book ${book.b_o}/${book.b_c}: the code was taken here, copied as ${code}`)
        return { b_o: String(answer.book.b_o), b_c: String(answer.book.b_c) }
      } catch (error) {
        if (error instanceof InterfaceError && error.code === 'CONFLICT') continue
        throw error
      }
    }
    throw new Error(`book ${book.b_o}/${book.b_c}: no free code found`)
  }

  private async copyMembers(book: SourceBook, bookState: BookState) {
    const skip = new Set([this.local.userCode, this.options.sourceUser ?? ''])
    const members = book.members.filter((member) => !skip.has(member.u_c))
    let done = 0
    for (const member of members) {
      this.progress(book, 'members', done++, members.length)
      if (bookState.members[member.u_c]) continue
      const right = Math.max(1, Math.min(member.right || 2, MAX_INVITED_RIGHT))
      try {
        await this.local.call('inviteMember', { ...bookState.local, member: member.u_c, right })
        bookState.members[member.u_c] = right
        await this.wrote('invitations')
      } catch (error) {
        if (error instanceof TransferStopped) throw error
        bookState.members[member.u_c] = 0
        this.problem(
          `book ${book.b_o}/${book.b_c}: member ${member.u_c} not invited (${describe(error)})`
        )
      }
    }
  }

  // ---------------------------------------------------------------- messages

  private async copyMessages(book: SourceBook, bookState: BookState) {
    let listed: { messages: SourceMessage[]; sstamp: number }
    try {
      listed = await this.source.messages(book)
    } catch (error) {
      this.problem(`book ${book.b_o}/${book.b_c}: messages not read (${describe(error)})`)
      return
    }
    // A message copied before and no longer listed was deleted (or moved) at the source. The
    // listing holds every message still there, so absence is exact, whatever the server's limit
    // on the deleted messages getBookMessages' sstamp form would list.
    const present = new Set(listed.messages.map((message) => String(message.smid)))
    for (const smid of Object.keys(bookState.messages).filter((id) => !present.has(id))) {
      try {
        await this.local.call('deleteMsg', {
          ...bookState.local,
          msg_id: bookState.messages[smid][0],
          msg: '',
        })
      } catch (error) {
        if (!(error instanceof InterfaceError && error.code === 'NOT_FOUND')) {
          this.problem(`message ${smid}: not deleted here (${describe(error)})`)
        }
      }
      delete bookState.messages[smid]
      await this.wrote('messages deleted')
    }
    let done = 0
    for (const message of listed.messages) {
      this.progress(book, 'messages', done++, listed.messages.length)
      if (message.del) continue
      const mapped = bookState.messages[String(message.smid)]
      if (mapped && mapped[1] >= int(message.sstamp)) continue
      try {
        const smid = await this.sendMessage(bookState, message, mapped?.[0])
        bookState.messages[String(message.smid)] = [smid, int(message.sstamp)]
        await this.copyMessageFiles(book, bookState, message, smid)
      } catch (error) {
        if (error instanceof TransferStopped) throw error
        this.problem(
          `message ${message.smid} of ${book.b_o}/${book.b_c}: not copied (${describe(error)})`
        )
        continue
      }
      if (done % MESSAGE_SAVE_EVERY === 0) await this.state.save()
      await this.wrote(mapped ? 'messages updated' : 'messages')
    }
    bookState.messagesStamp = listed.sstamp
    await this.state.save()
  }

  /** sendMsg (new, with the source's uuid as its idempotency key) or sendMsg with msg_id (edit). */
  private async sendMessage(bookState: BookState, message: SourceMessage, localSmid?: number) {
    const event = message.event ? eventOf(message.event) : undefined
    const answer = await this.local.call('sendMsg', {
      ...bookState.local,
      msg: message.msg ?? '',
      body: message.msgBody || undefined,
      bodyHtml: message.msgBodyHTML || message.msgBodyHtml || undefined,
      msgType: message.msgType || undefined,
      msgMethod: message.msgMethod || undefined,
      msgColor: message.msgColor || undefined,
      uuid: localSmid ? undefined : message.uuid,
      msg_id: localSmid,
      event,
    })
    return int(answer.createMessageId) || int(localSmid)
  }

  private async copyMessageFiles(
    book: SourceBook,
    bookState: BookState,
    message: SourceMessage,
    smid: number
  ) {
    const medias: Record<string, any>[] = Array.isArray(message.medias) ? message.medias : []
    for (const media of medias) {
      if (media.del) continue
      await this.copyFile(
        {
          b_o: book.b_o,
          b_c: book.b_c,
          id: int(media.id) || undefined,
          type: String(media.type ?? 'doc'),
          uuid: media.uuid,
          internName: media.internName,
        },
        String(media.originName || media.internName || 'file'),
        { ...bookState.local, smid },
        `message ${message.smid}`
      )
    }
  }

  /** Downloads a source file and uploads it here with fileUpload; the source uuid is kept when it is a random one. */
  private async copyFile(
    file: FileRef,
    name: string,
    target: Record<string, unknown>,
    where: string
  ) {
    const key = file.uuid || file.internName
    if (!key || this.state.data.files[key]) return
    const bytes = await this.source.download(file)
    if (!bytes) {
      this.problem(`${where}: file ${name} (${key}) could not be downloaded`)
      return
    }
    const uuid = file.uuid && V4.test(file.uuid) ? file.uuid.toLowerCase() : undefined
    let answer: Record<string, any>
    try {
      answer = await this.local.upload({ ...target, uuid }, bytes, name)
    } catch (error) {
      // The uuid is taken here (the archive of a book of this very server): a new one is made.
      if (!(uuid && error instanceof InterfaceError && error.code === 'INVALID_PARAMETER')) {
        this.problem(`${where}: file ${name} not stored (${describe(error)})`)
        return
      }
      try {
        answer = await this.local.upload(target, bytes, name)
      } catch (again) {
        this.problem(`${where}: file ${name} not stored (${describe(again)})`)
        return
      }
    }
    this.state.data.files[key] = String(answer.uuid ?? '')
    await this.wrote('files')
  }

  // ---------------------------------------------------------------- tables

  private async copyTables(book: SourceBook, bookState: BookState) {
    let tables: SourceTables | null
    try {
      tables = await this.source.tables(book)
    } catch (error) {
      this.problem(`book ${book.b_o}/${book.b_c}: tables not read (${describe(error)})`)
      return
    }
    if (!tables) return
    const categories = [...tables.categories].sort((a, b) => int(a.order) - int(b.order))
    const defaults = (bookState.defaults ??= {})
    for (const category of categories) {
      if (bookState.categories[category.id]) continue
      const answer = await this.local.call('createTable', {
        ...bookState.local,
        name: category.name,
        description: category.description || undefined,
        code: category.code || undefined,
      })
      bookState.categories[category.id] = int(answer.catId)
      defaults[category.id] = { viewId: int(answer.viewId), tabId: int(answer.tabId) }
      await this.state.save()
      await this.wrote('tables')
    }
    for (const late of [false, true]) {
      for (const category of categories) await this.copyFields(book, bookState, category, late)
    }
    for (const category of categories) {
      await this.copyViews(book, bookState, category, defaults[category.id] ?? {})
    }
    await this.copyTabs(book, bookState, tables, defaults)
    await this.state.save()

    const changed = new Map<number, SourceRow[]>()
    for (const category of categories) {
      changed.set(category.id, await this.copyRows(book, bookState, category))
    }
    for (const category of categories) {
      await this.copyLinks(book, bookState, category, changed.get(category.id) ?? [])
    }
    await this.state.save()
  }

  private async copyFields(
    book: SourceBook,
    bookState: BookState,
    category: SourceTables['categories'][number],
    late: boolean
  ) {
    const catId = bookState.categories[category.id]
    const fields = [...(category.fields ?? [])].sort((a, b) => int(a.order) - int(b.order))
    const shapes = (bookState.shapes ??= {})
    for (const field of fields) {
      if (LATE.has(field.type) !== late) continue
      if (field.encrypted) {
        if (!bookState.fields[field.id]) {
          this.problem(
            `table ${category.name}: encrypted field ${field.name} not copied (its values cannot be read without the password)`
          )
        }
        continue
      }
      const definition = {
        b_o: bookState.local.b_o,
        name: field.name,
        code: field.code || undefined,
        description: field.description || undefined,
        readOnly: COMPUTED.has(field.type) ? undefined : Boolean(field.readOnly),
        order: field.order,
        options: fieldOptions(field, bookState),
      }
      const shape = digest([field.type, definition])
      const known = bookState.fields[field.id]
      if (known && shapes[`field:${field.id}`] === shape) continue
      try {
        if (known) {
          // Changed at the source since it was copied: renamed, options, order (not its type).
          await this.local.call('updateField', { ...definition, fieldId: known })
          await this.wrote('fields updated')
        } else {
          const answer = await this.local.call('createField', {
            ...definition,
            catId,
            type: field.type,
          })
          bookState.fields[field.id] = int(answer.fieldId)
          await this.wrote('fields')
        }
        shapes[`field:${field.id}`] = shape
      } catch (error) {
        if (error instanceof TransferStopped) throw error
        this.problem(
          `table ${category.name}: field ${field.name} (${field.type}) not ${known ? 'updated' : 'copied'} (${describe(error)})`
        )
      }
    }
    void book
  }

  private async copyViews(
    book: SourceBook,
    bookState: BookState,
    category: SourceTables['categories'][number],
    fresh: { viewId?: number }
  ) {
    const catId = bookState.categories[category.id]
    const views: Record<string, any>[] = category.views ?? []
    const shapes = (bookState.shapes ??= {})
    for (const [index, view] of views.entries()) {
      const params = {
        b_o: bookState.local.b_o,
        name: view.name,
        description: view.description || undefined,
        presentation: view.presentation || undefined,
        locked: Boolean(view.locked),
        order: view.order,
        filterGroup: mapFilterGroup(view.filterGroup, bookState),
        card: mapIds(view.card, bookState),
        calendar: mapIds(view.calendar, bookState),
        hiddenFields: Array.isArray(view.hiddenFields)
          ? view.hiddenFields.map((id: number) => bookState.fields[id]).filter(Boolean)
          : undefined,
      }
      const shape = digest(params)
      const known = bookState.views[view.id]
      if (known && shapes[`view:${view.id}`] === shape) continue
      try {
        if (known) {
          await this.local.call('updateView', { ...params, viewId: known })
          shapes[`view:${view.id}`] = shape
          await this.wrote('views updated')
          continue
        }
        if (index === 0 && fresh.viewId) {
          await this.local.call('updateView', { ...params, viewId: fresh.viewId })
          bookState.views[view.id] = fresh.viewId
          delete fresh.viewId
        } else {
          const answer = await this.local.call('createView', { ...params, catId })
          bookState.views[view.id] = int(answer.viewId)
        }
        shapes[`view:${view.id}`] = shape
        await this.wrote('views')
      } catch (error) {
        if (error instanceof TransferStopped) throw error
        this.problem(`table ${category.name}: view ${view.name} not copied (${describe(error)})`)
      }
    }
    void book
  }

  private async copyTabs(
    book: SourceBook,
    bookState: BookState,
    tables: SourceTables,
    defaults: BookState['defaults']
  ) {
    for (const tab of tables.tabs ?? []) {
      if (bookState.tabs[tab.id]) continue
      const catId = bookState.categories[tab.category_id]
      if (!catId) continue
      const params = {
        b_o: bookState.local.b_o,
        view_id: tab.view_id ? bookState.views[tab.view_id] : undefined,
        order: tab.order,
        hidden: Boolean(tab.hidden),
      }
      const fresh = defaults[tab.category_id]
      try {
        if (fresh?.tabId) {
          await this.local.call('updateTab', { ...params, tabId: fresh.tabId })
          bookState.tabs[tab.id] = fresh.tabId
          delete fresh.tabId
        } else {
          const answer = await this.local.call('createTab', { ...params, catId })
          bookState.tabs[tab.id] = int(answer.tabId)
        }
        await this.wrote('tabs')
      } catch (error) {
        if (error instanceof TransferStopped) throw error
        this.problem(`tab ${tab.id}: not copied (${describe(error)})`)
      }
    }
    void book
  }

  /**
   * Values, files and comments of the table's rows, page by page; answers the changed rows'
   * link values, written once every table's rows exist.
   */
  private async copyRows(
    book: SourceBook,
    bookState: BookState,
    category: SourceTables['categories'][number]
  ): Promise<SourceRow[]> {
    const catId = bookState.categories[category.id]
    const fields = (category.fields ?? []).filter((field) => bookState.fields[field.id])
    const plain = fields.filter(
      (field) => !COMPUTED.has(field.type) && field.type !== 'files' && field.type !== 'link'
    )
    const links = fields.filter((field) => field.type === 'link')
    const mapped = (bookState.rows[category.id] ??= {})
    if (this.state.isUnsettled(this.bookKey, category.id)) {
      await this.dropOrphans(bookState, category, catId)
    }
    const changed: SourceRow[] = []
    const present = new Set<string>()
    const total = (await this.source.rowCount(book, category.id)) ?? 0
    let done = 0
    try {
      for await (const page of this.source.rows(book, category.id)) {
        const pending: { row: SourceRow; values: Record<string, unknown>; sum: string }[] = []
        for (const row of page) {
          this.progress(book, `rows of ${category.name}`, done++, Math.max(total, done))
          present.add(String(row.id))
          const values: Record<string, unknown> = {}
          for (const field of plain)
            values[bookState.fields[field.id]] = row.values[field.id] ?? null
          const sum = digest(
            fields.map((field) => [
              field.id,
              field.type === 'comments' ? null : row.values[field.id],
            ])
          )
          const known = mapped[row.id]
          if (known && known[1] === sum) continue
          if (links.length > 0) {
            changed.push({
              id: row.id,
              values: Object.fromEntries(links.map((field) => [field.id, row.values[field.id]])),
            })
          }
          pending.push({ row, values, sum })
        }
        for (let start = 0; start < pending.length; start += ROW_BATCH) {
          await this.writeRows(bookState, category, catId, pending.slice(start, start + ROW_BATCH))
        }
        await this.copyCells(book, bookState, category, page)
      }
    } catch (error) {
      if (error instanceof TransferStopped) throw error
      // Rows not read are not "gone": nothing is deleted after a failed read.
      this.problem(`table ${category.name}: rows not read (${describe(error)})`)
      return changed
    }

    // Rows gone from the source are deleted here.
    const gone = Object.keys(mapped).filter((id) => !present.has(id))
    for (const id of gone) {
      try {
        await this.local.call('deleteTableRow', { b_o: bookState.local.b_o, rowId: mapped[id][0] })
      } catch (error) {
        if (!(error instanceof InterfaceError && error.code === 'NOT_FOUND')) {
          this.problem(`table ${category.name}: row ${id} not deleted here (${describe(error)})`)
        }
      }
      delete mapped[id]
      await this.state.recordRows(this.bookKey, category.id, [[id, null, '']])
      await this.wrote('rows deleted')
    }
    return changed
  }

  /**
   * After a kill during a batch that created rows: the rows of this table here that no mapping
   * names and that are newer than every mapped one were made by that batch; they are deleted
   * (the rows are written again from the source).
   */
  private async dropOrphans(
    bookState: BookState,
    category: SourceTables['categories'][number],
    catId: number
  ) {
    const mapped = bookState.rows[category.id]
    const known = new Set<number>()
    let newest = 0
    for (const [local] of Object.values(mapped)) {
      known.add(local)
      if (local > newest) newest = local
    }
    const here = new ApiSource(this.local, 'local')
    const orphans: number[] = []
    const localBook = { ...bookState.local } as SourceBook
    for await (const page of here.rows(localBook, catId)) {
      for (const row of page) if (row.id > newest && !known.has(row.id)) orphans.push(row.id)
    }
    for (const rowId of orphans) {
      await this.local.call('deleteTableRow', { b_o: bookState.local.b_o, rowId })
      await this.wrote('orphan rows removed')
    }
    await this.state.markSettled(this.bookKey, category.id)
  }

  private async writeRows(
    bookState: BookState,
    category: SourceTables['categories'][number],
    catId: number,
    batch: { row: SourceRow; values: Record<string, unknown>; sum: string }[]
  ) {
    const mapped = bookState.rows[category.id]
    const keyOf = (row: SourceRow) => String(mapped[row.id]?.[0] ?? `tmp${row.id}`)
    const apply = (answer: Record<string, any>, items: typeof batch) => {
      const created = new Map<string, number>()
      for (const entry of answer.newRows ?? []) created.set(String(entry.tmpId), int(entry.id))
      for (const item of items) {
        const id = mapped[item.row.id]?.[0] ?? created.get(`tmp${item.row.id}`)
        if (id) mapped[item.row.id] = [id, item.sum]
      }
    }
    const creates = batch.some((item) => !mapped[item.row.id])
    if (creates) await this.state.markWriting(this.bookKey, category.id)
    try {
      const rows = Object.fromEntries(batch.map((item) => [keyOf(item.row), item.values]))
      apply(
        await this.local.call('createOrUpdateTableRows', {
          b_o: bookState.local.b_o,
          catId,
          rows,
          bypassUrlTrigger: true,
        }),
        batch
      )
    } catch (error) {
      // One bad value refuses the whole batch: each row alone, then each cell alone.
      for (const item of batch) await this.writeRowAlone(bookState, category, catId, item, error)
    }
    await this.state.recordRows(
      this.bookKey,
      category.id,
      batch
        .filter((item) => mapped[item.row.id])
        .map((item) => [String(item.row.id), mapped[item.row.id][0], item.sum])
    )
    if (creates) await this.state.markSettled(this.bookKey, category.id)
    await this.wrote('rows', batch.length)
  }

  private async writeRowAlone(
    bookState: BookState,
    category: SourceTables['categories'][number],
    catId: number,
    item: { row: SourceRow; values: Record<string, unknown>; sum: string },
    batchError: unknown
  ) {
    const mapped = bookState.rows[category.id]
    let id = mapped[item.row.id]?.[0]
    try {
      const answer = await this.local.call('createOrUpdateTableRows', {
        b_o: bookState.local.b_o,
        catId,
        rows: { [String(id ?? `tmp${item.row.id}`)]: item.values },
        bypassUrlTrigger: true,
      })
      id ??= int(answer.newRows?.[0]?.id)
      mapped[item.row.id] = [id, item.sum]
      return
    } catch {}
    if (!id) {
      const answer = await this.local.call('createOrUpdateTableRows', {
        b_o: bookState.local.b_o,
        catId,
        rows: { [`tmp${item.row.id}`]: {} },
        bypassUrlTrigger: true,
      })
      id = int(answer.newRows?.[0]?.id)
    }
    for (const [fieldId, value] of Object.entries(item.values)) {
      try {
        await this.local.call('updateTableValue', {
          b_o: bookState.local.b_o,
          rowId: id,
          fieldId,
          value: value ?? '',
          bypassUrlTrigger: true,
        })
      } catch (error) {
        this.problem(
          `table ${category.name}: row ${item.row.id}, field ${fieldId}: value not copied (${describe(error)})`
        )
      }
    }
    mapped[item.row.id] = [id, item.sum]
    void batchError
  }

  /** File cells and comment threads of the rows (the row must exist here first). */
  private async copyCells(
    book: SourceBook,
    bookState: BookState,
    category: SourceTables['categories'][number],
    rows: SourceRow[]
  ) {
    const mapped = bookState.rows[category.id]
    const files = (category.fields ?? []).filter(
      (field) => field.type === 'files' && bookState.fields[field.id]
    )
    const comments = (category.fields ?? []).filter(
      (field) => field.type === 'comments' && bookState.fields[field.id]
    )
    for (const row of rows) {
      const rowId = mapped[row.id]?.[0]
      if (!rowId) continue
      for (const field of files) {
        const list = parseList(row.values[field.id])
        for (const entry of list) {
          await this.copyFile(
            {
              b_o: book.b_o,
              b_c: book.b_c,
              type: String(entry.type ?? 'doc'),
              uuid: entry.uuid,
              internName: entry.internName ?? entry.name,
            },
            String(entry.originName || entry.name || entry.internName || 'file'),
            {
              b_o: bookState.local.b_o,
              rowId,
              fieldId: bookState.fields[field.id],
              bypassUrlTrigger: true,
            },
            `table ${category.name}, row ${row.id}`
          )
        }
      }
      for (const field of comments) {
        const cell = row.values[field.id] as Record<string, any> | null | undefined
        if (!cell || !cell.summary) continue
        const key = `${field.id}:${row.id}`
        const stamp = int(cell.summary.sstamp) || int(cell.summary.total)
        if (bookState.cells[key] === stamp) continue
        await this.copyComments(book, bookState, category, field, row, rowId)
        bookState.cells[key] = stamp
      }
    }
  }

  private async copyComments(
    book: SourceBook,
    bookState: BookState,
    category: SourceTables['categories'][number],
    field: Record<string, any>,
    row: SourceRow,
    rowId: number
  ) {
    let thread
    try {
      thread = await this.source.comments(book, field.id, row.id)
    } catch (error) {
      this.problem(`table ${category.name}, row ${row.id}: comments not read (${describe(error)})`)
      return
    }
    for (const comment of thread) {
      if (bookState.comments[comment.id]) continue
      try {
        const answer = await this.local.call('editTableValueComments', {
          b_o: bookState.local.b_o,
          fieldId: bookState.fields[field.id],
          rowId,
          m: comment.m,
          action:
            Array.isArray(comment.action) && comment.action.length ? comment.action : undefined,
        })
        bookState.comments[comment.id] = int(answer.id)
        await this.wrote('comments')
      } catch (error) {
        if (error instanceof TransferStopped) throw error
        this.problem(
          `table ${category.name}, row ${row.id}: comment ${comment.id} not copied (${describe(error)})`
        )
      }
    }
  }

  /** Link cells, once every table's rows exist here: source row ids become local ones. */
  private async copyLinks(
    book: SourceBook,
    bookState: BookState,
    category: SourceTables['categories'][number],
    rows: SourceRow[]
  ) {
    const links = (category.fields ?? []).filter(
      (field) => field.type === 'link' && bookState.fields[field.id]
    )
    if (links.length === 0 || rows.length === 0) return
    const mapped = bookState.rows[category.id]
    const targets = (field: Record<string, any>) => bookState.rows[field.linkCatId] ?? {}
    const batch: Record<string, Record<string, unknown>> = {}
    for (const row of rows) {
      const rowId = mapped[row.id]?.[0]
      if (!rowId) continue
      const values: Record<string, unknown> = {}
      for (const field of links) {
        const ids = Array.isArray(row.values[field.id]) ? (row.values[field.id] as unknown[]) : []
        values[bookState.fields[field.id]] = ids
          .map((id) => targets(field)[String(id)]?.[0])
          .filter(Boolean)
      }
      batch[String(rowId)] = values
    }
    const ids = Object.keys(batch)
    for (let start = 0; start < ids.length; start += ROW_BATCH) {
      const part = Object.fromEntries(
        ids.slice(start, start + ROW_BATCH).map((id) => [id, batch[id]])
      )
      try {
        await this.local.call('createOrUpdateTableRows', {
          b_o: bookState.local.b_o,
          catId: bookState.categories[category.id],
          rows: part,
          bypassUrlTrigger: true,
        })
      } catch (error) {
        this.problem(`table ${category.name}: links not copied (${describe(error)})`)
      }
    }
    void book
  }
}

/** A cell's file list: JSON text or an array (client-facts: empty file cells are null). */
function parseList(value: unknown): Record<string, any>[] {
  if (Array.isArray(value)) return value
  if (typeof value === 'string' && value.startsWith('[')) {
    try {
      return JSON.parse(value)
    } catch {}
  }
  return []
}

/** A message's event as sendMsg takes it; participants are ids of the source's users, left out. */
function eventOf(event: Record<string, any>) {
  const rest = { ...event }
  delete rest.eventParticipants
  return rest
}

/** createField's options from a serialized field definition (the tables README's field types). */
function fieldOptions(field: Record<string, any>, bookState: BookState) {
  const options: Record<string, unknown> = {}
  const copy = (...names: string[]) => {
    for (const name of names)
      if (field[name] !== undefined && field[name] !== null) options[name] = field[name]
  }
  switch (field.type) {
    case 'enum':
      copy('values', 'enumColors', 'multiple')
      break
    case 'date':
      copy('withTime', 'dateFormat')
      break
    case 'double':
      copy('numformat')
      break
    case 'link':
      copy('multiple')
      if (field.linkCatId) options.linkCatId = bookState.categories[field.linkCatId]
      break
    case 'lookup':
    case 'rollup':
      copy('rollup')
      if (field.linkFieldId) options.linkFieldId = bookState.fields[field.linkFieldId]
      if (field.targetFieldId) options.targetFieldId = bookState.fields[field.targetFieldId]
      break
    case 'formula':
      copy('formula', 'resultType', 'numformat')
      break
    case 'smarttext':
      copy('template', 'templateFormat')
      break
  }
  return Object.keys(options).length ? options : undefined
}

/** A view's card or calendar settings: every `*_field_id` mapped to the local field. */
function mapIds(settings: Record<string, unknown> | null | undefined, bookState: BookState) {
  if (!settings) return undefined
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(settings)) {
    out[name] =
      name.endsWith('field_id') && value ? (bookState.fields[String(value)] ?? null) : value
  }
  return out
}

/** A saved filter group as an unsaved one (filter ids `tmpN`) over the local fields. */
function mapFilterGroup(group: Record<string, any> | null | undefined, bookState: BookState) {
  if (!group || !Array.isArray(group.filters)) return undefined
  return {
    operator: group.operator ?? 'and',
    filters: group.filters
      .filter((filter: Record<string, any>) => bookState.fields[filter.field_id])
      .map((filter: Record<string, any>, index: number) => ({
        id: `tmp${index}`,
        field_id: bookState.fields[filter.field_id],
        filter_type: filter.filter_type,
        json: filter.json,
      })),
  }
}
