import { createHash } from 'node:crypto'
import { createReadStream, existsSync } from 'node:fs'
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import * as tar from 'tar'
import type { FileRef } from './interface_client.js'
import type {
  SourceBook,
  SourceComment,
  SourceMessage,
  SourceRow,
  SourceTables,
  TransferSource,
} from './transfer_source.js'
import { sourceBookOf } from './transfer_source.js'

export const ARCHIVE_FORMAT = 'quire-book'
export const ARCHIVE_VERSION = 1
/** Rows handed to the importer at a time when reading an archive. */
const ARCHIVE_ROW_PAGE = 500
/** The archive's JSON document, at the root of the tar. */
export const ARCHIVE_DOCUMENT = 'book.json'

/**
 * The portable archive of one book (docs/import-export.md): `book.json` holds the book as the
 * interface answers it (getAllBooks' book, getBookMessages' messages oldest first,
 * getBookTables with field definitions, each comment thread), `rows/<table id>.jsonl` each
 * table's rows by field id (one a line, so a big table is never one JSON value), and
 * `files/<key>` the original bytes of every message and cell file, named in `files`.
 */
export interface ArchiveDocument {
  format: typeof ARCHIVE_FORMAT
  version: typeof ARCHIVE_VERSION
  exportedAt: string
  book: Record<string, any>
  messages: SourceMessage[]
  messagesStamp: number
  tables: SourceTables | null
  /** By table id: its rows file (one JSON row a line, in row order) and how many rows it holds. */
  rows: Record<string, { path: string; count: number }>
  comments: Record<string, SourceComment[]>
  files: Record<string, { path: string; name: string; size: number }>
}

/** The key of a file in the archive: its uuid, else its internal name. */
export const fileKey = (file: Pick<FileRef, 'uuid' | 'internName'>) =>
  file.uuid || file.internName || ''

/** An archive's path for a file key: a digest, so no key can name a path outside files/. */
const filePath = (key: string) =>
  `files/${createHash('sha256').update(key).digest('hex').slice(0, 32)}`

/** Builds an archive in a temporary folder, then packs it as a .tar.gz. */
export class ArchiveWriter {
  private constructor(
    private dir: string,
    readonly document: ArchiveDocument
  ) {}

  static async create(book: Record<string, any>) {
    const dir = await mkdtemp(join(tmpdir(), 'quire-export-'))
    await mkdir(join(dir, 'files'))
    await mkdir(join(dir, 'rows'))
    return new ArchiveWriter(dir, {
      format: ARCHIVE_FORMAT,
      version: ARCHIVE_VERSION,
      exportedAt: new Date().toISOString(),
      book,
      messages: [],
      messagesStamp: 0,
      tables: null,
      rows: {},
      comments: {},
      files: {},
    })
  }

  hasFile(key: string) {
    return Boolean(this.document.files[key])
  }

  async addFile(key: string, name: string, bytes: Buffer) {
    const path = filePath(key)
    await writeFile(join(this.dir, path), bytes)
    this.document.files[key] = { path, name, size: bytes.length }
  }

  /** Appends a page of a table's rows to its rows file. */
  async addRows(catId: number, rows: SourceRow[]) {
    const entry = (this.document.rows[String(catId)] ??= { path: `rows/${catId}.jsonl`, count: 0 })
    if (rows.length === 0) {
      await appendFile(join(this.dir, entry.path), '')
      return
    }
    await appendFile(
      join(this.dir, entry.path),
      `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`
    )
    entry.count += rows.length
  }

  /** Removes the temporary folder of an export that failed. */
  async discard() {
    await rm(this.dir, { recursive: true, force: true })
  }

  async pack(out: string) {
    try {
      await writeFile(join(this.dir, ARCHIVE_DOCUMENT), JSON.stringify(this.document))
      await mkdir(dirname(resolve(out)), { recursive: true })
      await tar.create({ gzip: true, file: out, cwd: this.dir, portable: true }, [
        ARCHIVE_DOCUMENT,
        'rows',
        'files',
      ])
    } finally {
      await rm(this.dir, { recursive: true, force: true })
    }
  }
}

/**
 * An archive as a transfer source: unpacked into a temporary folder (node-tar refuses
 * absolute and `..` paths), read as the interface's answers would be. close() removes it.
 */
export class ArchiveSource implements TransferSource {
  readonly label: string

  private constructor(
    private dir: string,
    readonly document: ArchiveDocument
  ) {
    this.label = `archive:${document.book.b_o}/${document.book.b_c}@${document.exportedAt}`
  }

  static async open(file: string) {
    if (!existsSync(file)) throw new Error(`${file}: no such archive`)
    const dir = await mkdtemp(join(tmpdir(), 'quire-archive-'))
    try {
      await tar.extract({ file, cwd: dir, strict: true })
      const document = JSON.parse(
        await readFile(join(dir, ARCHIVE_DOCUMENT), 'utf8')
      ) as ArchiveDocument
      if (document.format !== ARCHIVE_FORMAT || document.version !== ARCHIVE_VERSION) {
        throw new Error(`${file}: not a ${ARCHIVE_FORMAT} archive of version ${ARCHIVE_VERSION}`)
      }
      return new ArchiveSource(dir, document)
    } catch (error) {
      await rm(dir, { recursive: true, force: true })
      throw error
    }
  }

  async close() {
    await rm(this.dir, { recursive: true, force: true })
  }

  async books(): Promise<SourceBook[]> {
    return [{ ...sourceBookOf(this.document.book), accepted: true, del: false }]
  }

  async messages() {
    return { messages: this.document.messages, sstamp: this.document.messagesStamp }
  }

  async tables() {
    return this.document.tables
  }

  async *rows(_book: SourceBook, catId: number) {
    const entry = this.document.rows[String(catId)]
    const path = entry ? this.inside(entry.path) : null
    if (!path || !existsSync(path)) return
    const lines = createInterface({ input: createReadStream(path, 'utf8') })
    let page: SourceRow[] = []
    for await (const line of lines) {
      if (line.trim() === '') continue
      page.push(JSON.parse(line) as SourceRow)
      if (page.length >= ARCHIVE_ROW_PAGE) {
        yield page
        page = []
      }
    }
    if (page.length > 0) yield page
  }

  async rowCount(_book: SourceBook, catId: number) {
    return this.document.rows[String(catId)]?.count ?? 0
  }

  /** A path of the unpacked archive, or null when it would lead outside it. */
  private inside(relative: string) {
    const path = resolve(this.dir, relative)
    return path.startsWith(resolve(this.dir) + '/') ? path : null
  }

  async comments(_book: SourceBook, fieldId: number, rowId: number) {
    return this.document.comments[`${fieldId}:${rowId}`] ?? []
  }

  async download(file: FileRef) {
    const entry = this.document.files[fileKey(file)]
    const path = entry ? this.inside(entry.path) : null
    if (!path) return null
    return readFile(path).catch(() => null)
  }
}
