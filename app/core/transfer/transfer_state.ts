import { createReadStream, existsSync } from 'node:fs'
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { createInterface } from 'node:readline'

/** What was copied of one source book: source ids to local ids, and the stamps last seen. */
export interface BookState {
  local: { b_o: string; b_c: string }
  /** The source book's sstamp when it was last copied whole (getAllBooks). */
  sstamp: number
  /** A digest of the title and description last written (updateBook when it changes). */
  about?: string
  /** getBookMessages' sstamp of the last complete message pass. */
  messagesStamp: number
  members: Record<string, number>
  /** source smid -> [local smid, source sstamp] */
  messages: Record<string, [number, number]>
  categories: Record<string, number>
  fields: Record<string, number>
  views: Record<string, number>
  tabs: Record<string, number>
  /** source row id -> [local row id, digest of the values written] */
  rows: Record<string, Record<string, [number, string]>>
  /** `field:<id>` / `view:<id>` -> a digest of the definition last written (update when it changes) */
  shapes?: Record<string, string>
  /** source comment id -> local comment id */
  comments: Record<string, number>
  /** `<field>:<row>` -> the comment summary stamp last copied */
  cells: Record<string, number>
  /**
   * The view and tab createTable made for a table, until a source view or tab takes them
   * (kept here so a run interrupted in between does not make another view).
   */
  defaults: Record<string, { viewId?: number; tabId?: number }>
  complete: boolean
}

export interface StateData {
  version: 1
  source: string
  localUser: string
  books: Record<string, BookState>
  /** source file uuid (or internal name) -> local uuid */
  files: Record<string, string>
}

export function emptyBookState(local: { b_o: string; b_c: string }): BookState {
  return {
    local,
    sstamp: 0,
    messagesStamp: 0,
    members: {},
    messages: {},
    categories: {},
    fields: {},
    views: {},
    tabs: {},
    rows: {},
    comments: {},
    cells: {},
    defaults: {},
    complete: false,
  }
}

/** One line of the rows journal: book key, source table, source row, local row (null: gone), digest. */
type RowEntry = [string, string, string, number | null, string]

/**
 * The transfer's memory between runs: a JSON file written after each step (a temporary file
 * renamed over the old one, so a crash leaves the previous complete state), and beside it a
 * journal of row mappings (`<file>.rows.jsonl`), appended after each batch of rows: a table of
 * a million rows costs one line per row, not a rewrite of the whole state per batch. An
 * interrupted run continues from them; a run after a complete one copies only what changed.
 */
export class TransferState {
  private constructor(
    readonly path: string,
    readonly data: StateData
  ) {}

  get journalPath() {
    return `${this.path}.rows.jsonl`
  }

  static async open(path: string, source: string, localUser: string) {
    if (!existsSync(path)) {
      return new TransferState(path, { version: 1, source, localUser, books: {}, files: {} })
    }
    const data = JSON.parse(await readFile(path, 'utf8')) as StateData
    if (data.source !== source || data.localUser !== localUser) {
      throw new Error(
        `${path} records a transfer from ${data.source} as ${data.localUser}, not from ${source} as ${localUser}: give another --state`
      )
    }
    const state = new TransferState(path, data)
    await state.replay()
    return state
  }

  /**
   * Tables (`<book>|<table>`) a batch of new rows was being written to when the run ended without
   * recording it (a kill): rows may exist here that no mapping names. The importer removes them.
   */
  private unsettled = new Set<string>()

  private async replay() {
    if (!existsSync(this.journalPath)) return
    const lines = createInterface({ input: createReadStream(this.journalPath, 'utf8') })
    for await (const line of lines) {
      let entry: RowEntry | [string, string, string]
      try {
        entry = JSON.parse(line)
      } catch {
        continue // the last line of a run killed while appending
      }
      if (entry[0] === '#intent') this.unsettled.add(`${entry[1]}|${entry[2]}`)
      if (entry[0] === '#settled') this.unsettled.delete(`${entry[1]}|${entry[2]}`)
      if (entry.length !== 5) continue
      const [book, table, row, local, sum] = entry
      const rows = this.data.books[book]?.rows
      if (!rows) continue
      const mapped = (rows[table] ??= {})
      if (local === null) delete mapped[row]
      else mapped[row] = [local, sum]
    }
  }

  isUnsettled(book: string, table: string | number) {
    return this.unsettled.has(`${book}|${table}`)
  }

  /** Before a batch that creates rows: until it is settled, a kill leaves rows no mapping names. */
  async markWriting(book: string, table: string | number) {
    await mkdir(dirname(this.path), { recursive: true })
    await appendFile(this.journalPath, `${JSON.stringify(['#intent', book, String(table)])}\n`)
  }

  async markSettled(book: string, table: string | number) {
    this.unsettled.delete(`${book}|${table}`)
    await appendFile(this.journalPath, `${JSON.stringify(['#settled', book, String(table)])}\n`)
  }

  /** Appends the mappings of rows just written (or deleted: local null) to the journal. */
  async recordRows(book: string, table: string | number, rows: [string, number | null, string][]) {
    if (rows.length === 0) return
    await mkdir(dirname(this.path), { recursive: true })
    const lines = rows.map(([row, local, sum]) =>
      JSON.stringify([book, String(table), row, local, sum])
    )
    await appendFile(this.journalPath, `${lines.join('\n')}\n`)
  }

  /** The state without its row mappings (they live in the journal). */
  async save() {
    await mkdir(dirname(this.path), { recursive: true })
    const books = Object.fromEntries(
      Object.entries(this.data.books).map(([key, book]) => [key, { ...book, rows: {} }])
    )
    const temporary = `${this.path}.${process.pid}.tmp`
    await writeFile(temporary, JSON.stringify({ ...this.data, books }))
    await rename(temporary, this.path)
  }

  /** Rewrites the journal with only the current mappings (after a complete run). */
  async compact() {
    const temporary = `${this.journalPath}.${process.pid}.tmp`
    const lines: string[] = []
    for (const [book, state] of Object.entries(this.data.books)) {
      for (const [table, rows] of Object.entries(state.rows)) {
        for (const [row, [local, sum]] of Object.entries(rows)) {
          lines.push(JSON.stringify([book, table, row, local, sum]))
        }
      }
    }
    await mkdir(dirname(this.path), { recursive: true })
    await writeFile(temporary, lines.length ? `${lines.join('\n')}\n` : '')
    await rename(temporary, this.journalPath)
  }
}
