import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

/** What was copied of one source book: source ids to local ids, and the stamps last seen. */
export interface BookState {
  local: { b_o: string; b_c: string }
  /** The source book's sstamp when it was last copied whole (getAllBooks). */
  sstamp: number
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

/**
 * The transfer's memory between runs: a JSON file written after each batch of writes (a
 * temporary file renamed over the old one, so a crash leaves the previous complete state). An
 * interrupted run continues from it; a run after a complete one copies only what changed.
 */
export class TransferState {
  private constructor(
    readonly path: string,
    readonly data: StateData
  ) {}

  static async open(path: string, source: string, localUser: string) {
    if (existsSync(path)) {
      const data = JSON.parse(await readFile(path, 'utf8')) as StateData
      if (data.source !== source || data.localUser !== localUser) {
        throw new Error(
          `${path} records a transfer from ${data.source} as ${data.localUser}, not from ${source} as ${localUser}: give another --state`
        )
      }
      return new TransferState(path, data)
    }
    return new TransferState(path, { version: 1, source, localUser, books: {}, files: {} })
  }

  async save() {
    await mkdir(dirname(this.path), { recursive: true })
    const temporary = `${this.path}.${process.pid}.tmp`
    await writeFile(temporary, JSON.stringify(this.data))
    await rename(temporary, this.path)
  }
}
