import type { FileRef, InterfaceClient } from './interface_client.js'

/** A book as getAllBooks answers it (spec 2.4): the members of it the transfer reads. */
export interface SourceBook {
  b_o: string
  b_c: string
  sstamp: number
  title: string
  description: string
  accepted: boolean
  del: boolean
  members: { u_c: string; invite: string; right: number }[]
  ownerPrefs: Record<string, unknown>
}

/** One message (spec 2.5), oldest first in `messages()`. */
export type SourceMessage = Record<string, any> & {
  smid: number
  uuid: string
  sstamp: number
  del: boolean
}

/** getBookTables' bookTables with field definitions (spec 2.6), or null for a book without tables. */
export type SourceTables = Record<string, any> & {
  tabs: Record<string, any>[]
  categories: (Record<string, any> & { id: number; fields: Record<string, any>[] | null })[]
}

/** One row: its id and each field's value by field id (the columns layout, spec 2.7). */
export interface SourceRow {
  id: number
  values: Record<string, unknown>
}

/** One comment of a cell (spec 2.8), oldest first. */
export interface SourceComment {
  id: number
  m: string
  uc: string
  c: number
  action?: unknown
}

/** What a transfer reads from: a server speaking the interface, or an archive. */
export interface TransferSource {
  /** Where the data comes from, for the state file and the report. */
  readonly label: string
  books(): Promise<SourceBook[]>
  /** Every message of the book still present (not deleted), oldest first, and the answer's stamp. */
  messages(book: SourceBook): Promise<{ messages: SourceMessage[]; sstamp: number }>
  tables(book: SourceBook): Promise<SourceTables | null>
  /** The table's rows, page after page, in row order. */
  rows(book: SourceBook, catId: number): AsyncIterable<SourceRow[]>
  /** How many rows the table has (for the progress bar), or null when the source cannot say. */
  rowCount(book: SourceBook, catId: number): Promise<number | null>
  comments(book: SourceBook, fieldId: number, rowId: number): Promise<SourceComment[]>
  download(file: FileRef): Promise<Buffer | null>
}

const int = (value: unknown) => Number(value ?? 0) || 0

/** Rows read per getTableValues call (the spec's default page; every server allows it). */
export const ROW_PAGE = 100
/** Messages read per getBookMessages call (the spec's default page). */
export const MESSAGE_PAGE = 50

export function sourceBookOf(wire: Record<string, any>): SourceBook {
  return {
    b_o: String(wire.b_o),
    b_c: String(wire.b_c),
    sstamp: int(wire.sstamp),
    title: String(wire.ownerPrefs?.title ?? wire.b_c ?? ''),
    description: String(wire.description ?? ''),
    accepted: wire.accepted !== false,
    del: wire.del === true,
    members: Array.isArray(wire.members)
      ? wire.members.map((member: Record<string, any>) => ({
          u_c: String(member.u_c),
          invite: String(member.invite ?? ''),
          right: int(member.right),
        }))
      : [],
    ownerPrefs: wire.ownerPrefs ?? {},
  }
}

/**
 * Reads through the interface's own read operations (getAllBooks, getBookMessages,
 * getBookTables, getTableValues, getTableValueComments) and its file URLs: the remote server
 * of import:remote, and this server itself for export.
 */
export class ApiSource implements TransferSource {
  constructor(
    private client: InterfaceClient,
    readonly label: string,
    private only?: { b_o: string; b_c: string }
  ) {}

  async books() {
    const answer = await this.client.call('getAllBooks', this.only ? { ...this.only } : {})
    const books: Record<string, any>[] = answer.allBooks?.books ?? []
    return books
      .map(sourceBookOf)
      .filter((book) => !this.only || (book.b_o === this.only.b_o && book.b_c === this.only.b_c))
  }

  async messages(book: SourceBook) {
    const all: SourceMessage[] = []
    let smidLast: number | undefined
    let sstamp = 0
    for (;;) {
      const answer = await this.client.call('getBookMessages', {
        b_o: book.b_o,
        b_c: book.b_c,
        nbMax: MESSAGE_PAGE,
        smidLast,
      })
      if (!sstamp) sstamp = int(answer.sstamp)
      const page: SourceMessage[] = answer.bookMessages ?? answer.messages ?? []
      const older = page.filter((message) => smidLast === undefined || message.smid < smidLast)
      all.push(...older)
      // A server may answer fewer than asked (its own page limit): only an empty page ends.
      if (older.length === 0) break
      smidLast = Math.min(...older.map((message) => int(message.smid)))
    }
    const unique = new Map(all.map((message) => [int(message.smid), message]))
    return {
      messages: [...unique.values()].sort((a, b) => int(a.smid) - int(b.smid)),
      sstamp,
    }
  }

  async tables(book: SourceBook) {
    const answer = await this.client.call('getBookTables', {
      b_o: book.b_o,
      b_c: book.b_c,
      includeFields: true,
      includeEnums: true,
    })
    const tables = answer.bookTables
    if (!tables || !Array.isArray(tables.categories)) return null
    return tables as SourceTables
  }

  async *rows(book: SourceBook, catId: number) {
    const seen = new Set<number>()
    let offset = 0
    for (;;) {
      const answer = await this.client.call('getTableValues', {
        b_o: book.b_o,
        catId,
        offset,
        maxRows: ROW_PAGE,
      })
      const values = answer.tableValues ?? {}
      const infos: Record<string, { order?: number; index?: number }> = Array.isArray(
        values.rowInfos
      )
        ? {}
        : (values.rowInfos ?? {})
      const page = new Map<number, SourceRow>()
      // A table without fields still lists its rows in rowInfos.
      for (const id of Object.keys(infos)) page.set(int(id), { id: int(id), values: {} })
      for (const field of values.fields ?? []) {
        for (const cell of field.values ?? []) {
          const id = int(cell.id)
          let row = page.get(id)
          if (!row) page.set(id, (row = { id, values: {} }))
          row.values[String(field.id)] = cell.value
        }
      }
      const position = (row: SourceRow) => int(infos[row.id]?.index ?? infos[row.id]?.order)
      // A row written at the source while it is read may move into the next page: once is enough.
      const ordered = [...page.values()]
        .sort((a, b) => position(a) - position(b))
        .filter((row) => !seen.has(row.id))
      for (const row of ordered) seen.add(row.id)
      // Only a page with nothing new ends: a server may cap maxRows below the page asked for
      // (and one that ignored offset would repeat its first page forever otherwise).
      if (ordered.length === 0) break
      yield ordered
      offset += page.size
    }
  }

  async rowCount(book: SourceBook, catId: number) {
    try {
      const answer = await this.client.call('computeTableOperation', {
        b_o: book.b_o,
        catId,
        operation: 'count',
      })
      const count = Number(answer.result)
      return Number.isFinite(count) ? count : null
    } catch {
      return null
    }
  }

  async comments(book: SourceBook, fieldId: number, rowId: number) {
    const answer = await this.client.call('getTableValueComments', {
      b_o: book.b_o,
      fieldId,
      rowId,
    })
    const comments: SourceComment[] = answer.data?.comments ?? []
    return comments.map((comment) => ({
      id: int(comment.id),
      m: String(comment.m ?? ''),
      uc: String(comment.uc ?? ''),
      c: int(comment.c),
      action: comment.action,
    }))
  }

  download(file: FileRef) {
    return this.client.download(file)
  }
}
