import { ArchiveWriter, fileKey } from './book_archive.js'
import type { FileRef, LocalClient } from './interface_client.js'
import { ApiSource } from './transfer_source.js'

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

  constructor(
    private local: LocalClient,
    private book: { b_o: string; b_c: string },
    private progress?: (phase: string, done: number, total: number) => void
  ) {}

  async export(out: string) {
    const source = new ApiSource(this.local, 'local', this.book)
    const books = await this.local.call('getAllBooks', { ...this.book })
    const wire = (books.allBooks?.books ?? []).find(
      (candidate: Record<string, any>) =>
        candidate.b_o === this.book.b_o && candidate.b_c === this.book.b_c
    )
    if (!wire) throw new Error(`${this.book.b_o}/${this.book.b_c}: no such book for this user`)
    const [book] = await source.books()
    const archive = await ArchiveWriter.create(wire)
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
      const rows = await source.rows(book, category.id)
      document.rows[String(category.id)] = rows
      this.report.rows += rows.length
      const fields = category.fields ?? []
      done = 0
      for (const row of rows) {
        this.progress?.(`rows of ${category.name}`, done++, rows.length)
        for (const field of fields) {
          const value = row.values[String(field.id)]
          if (field.type === 'files') {
            for (const entry of listOf(value)) {
              await this.addFile(
                archive,
                {
                  b_o: book.b_o,
                  b_c: book.b_c,
                  type: String(entry.type ?? 'doc'),
                  uuid: entry.uuid,
                  internName: entry.internName ?? entry.name,
                },
                String(entry.originName || entry.name || 'file')
              )
            }
          }
          if (field.type === 'comments' && value && (value as any).summary) {
            const thread = await source.comments(book, field.id, row.id)
            document.comments[`${field.id}:${row.id}`] = thread
            this.report.comments += thread.length
          }
        }
      }
    }
    await archive.pack(out)
    return this.report
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
