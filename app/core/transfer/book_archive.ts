import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
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
/** The archive's JSON document, at the root of the tar. */
export const ARCHIVE_DOCUMENT = 'book.json'

/**
 * The portable archive of one book (docs/import-export.md): `book.json` holds the book as the
 * interface answers it (getAllBooks' book, getBookMessages' messages oldest first,
 * getBookTables with field definitions, each table's rows by field id, each comment thread),
 * and `files/<key>` the original bytes of every message and cell file, named in `files`.
 */
export interface ArchiveDocument {
  format: typeof ARCHIVE_FORMAT
  version: typeof ARCHIVE_VERSION
  exportedAt: string
  book: Record<string, any>
  messages: SourceMessage[]
  messagesStamp: number
  tables: SourceTables | null
  rows: Record<string, SourceRow[]>
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

  async pack(out: string) {
    try {
      await writeFile(join(this.dir, ARCHIVE_DOCUMENT), JSON.stringify(this.document))
      await mkdir(dirname(resolve(out)), { recursive: true })
      await tar.create({ gzip: true, file: out, cwd: this.dir, portable: true }, [
        ARCHIVE_DOCUMENT,
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

  async changedMessages() {
    return []
  }

  async tables() {
    return this.document.tables
  }

  async rows(_book: SourceBook, catId: number) {
    return this.document.rows[String(catId)] ?? []
  }

  async comments(_book: SourceBook, fieldId: number, rowId: number) {
    return this.document.comments[`${fieldId}:${rowId}`] ?? []
  }

  async download(file: FileRef) {
    const entry = this.document.files[fileKey(file)]
    if (!entry) return null
    const path = resolve(this.dir, entry.path)
    if (!path.startsWith(resolve(this.dir) + '/')) return null
    return readFile(path).catch(() => null)
  }
}
