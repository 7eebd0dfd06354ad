import { ArchiveWriter, fileKey } from './book_archive.js'
import type { FileRef, LocalClient } from './interface_client.js'
import { ApiSource, type SourceBook, type SourceRow } from './transfer_source.js'

const int = (value: unknown) => Number(value ?? 0) || 0

/** A cell's file list: JSON text or an array. */
function listOf(value: unknown): Record<string, any>[] {
  if (Array.isArray(value)) return value
  if (typeof value === 'string' && value.startsWith('[')) {
    try {
      return JSON.parse(value)
    } catch {}
  }
  return []
}

export interface ExportReport {
  messages: number
  tables: number
  rows: number
  comments: number
  files: number
  problems: string[]
}

/**
 * Writes one book of this server to a portable archive (book_archive.ts), read through the
 * interface's own read operations as a member of the book (LocalClient): what an archive
 * holds is what a client of that member would see.
 */
export class BookExporter {
  readonly report: ExportReport = {
    messages: 0,
    tables: 0,
    rows: 0,
    comments: 0,
    files: 0,
    problems: [],
  }

  private source: ApiSource

  constructor(
    private local: LocalClient,
    private book: { b_o: string; b_c: string },
    private progress?: (phase: string, done: number, total: number) => void
  ) {
    this.source = new ApiSource(local, 'local', book)
  }

  async export(out: string) {
    const books = await this.local.call('getAllBooks', { ...this.book })
    const wire = (books.allBooks?.books ?? []).find(
      (candidate: Record<string, any>) =>
        candidate.b_o === this.book.b_o && candidate.b_c === this.book.b_c
    )
    if (!wire) throw new Error(`${this.book.b_o}/${this.book.b_c}: no such book for this user`)
    const [book] = await this.source.books()
    const archive = await ArchiveWriter.create(wire)
    try {
      await this.fill(archive, book)
    } catch (error) {
      await archive.discard()
      throw error
    }
    await archive.pack(out)
    return this.report
  }

  private async fill(archive: ArchiveWriter, book: SourceBook) {
    const source = this.source
    const document = archive.document

    const { messages, sstamp } = await source.messages(book)
    document.messages = messages
    document.messagesStamp = sstamp
    this.report.messages = messages.length
    let done = 0
    for (const message of messages) {
      this.progress?.('messages', done++, messages.length)
      for (const media of Array.isArray(message.medias) ? message.medias : []) {
        if (media.del) continue
        await this.addFile(
          archive,
          {
            b_o: book.b_o,
            b_c: book.b_c,
            id: int(media.id) || undefined,
            type: String(media.type ?? 'doc'),
            uuid: media.uuid,
            internName: media.internName,
          },
          String(media.originName || media.internName || 'file')
        )
      }
    }

    const tables = await source.tables(book)
    document.tables = tables
    for (const category of tables?.categories ?? []) {
      this.report.tables++
      const fields = category.fields ?? []
      const total = (await source.rowCount(book, category.id)) ?? 0
      done = 0
      await archive.addRows(category.id, [])
      for await (const rows of source.rows(book, category.id)) {
        await archive.addRows(category.id, rows)
        this.report.rows += rows.length
        for (const row of rows) {
          this.progress?.(`rows of ${category.name}`, done++, Math.max(total, done))
          for (const field of fields) await this.addCell(archive, book, field, row)
        }
      }
    }
  }

  /** A row's files and comment thread, for the cells of those types. */
  private async addCell(
    archive: ArchiveWriter,
    book: SourceBook,
    field: Record<string, any>,
    row: SourceRow
  ) {
    const value = row.values[String(field.id)]
    if (field.type === 'files') {
      for (const entry of listOf(value)) {
        const file = {
          b_o: book.b_o,
          b_c: book.b_c,
          type: String(entry.type ?? 'doc'),
          uuid: entry.uuid,
          internName: entry.internName ?? entry.name,
        }
        await this.addFile(archive, file, String(entry.originName || entry.name || 'file'))
      }
    }
    if (field.type === 'comments' && value && (value as any).summary) {
      const thread = await this.source.comments(book, field.id, row.id)
      archive.document.comments[`${field.id}:${row.id}`] = thread
      this.report.comments += thread.length
    }
  }

  private async addFile(archive: ArchiveWriter, file: FileRef, name: string) {
    const key = fileKey(file)
    if (!key || archive.hasFile(key)) return
    const bytes = await this.local.download(file)
    if (!bytes) {
      this.report.problems.push(`file ${name} (${key}) could not be read`)
      return
    }
    await archive.addFile(key, name, bytes)
    this.report.files++
  }
}
