import { randomUUID } from 'node:crypto'
import { inject } from '@adonisjs/core'
import type { Logger } from '@adonisjs/core/logger'
import emitter from '@adonisjs/core/services/emitter'
import { parseList } from '#core/json_column'
import { QueueService } from '#core/services/queue_service'
import type { BookMessageCreated, BookMessageDeleted, BookUpdated } from '#plugins/books/events'
import { BookService } from '#plugins/books/services/book_service'
import { MessageWriter } from '#plugins/books/services/message_writer'
import type { FieldsDeleted, RowsChanged } from '#plugins/tables/events'
import { MetaService } from '#plugins/tables/services/meta_service'
import { ValuesService } from '#plugins/tables/services/values_service'
import { DerivativeService } from './derivative_service.js'
import { MediaFiles, newStorageName, type FileSelection, type MediaFile } from './media_files.js'
import { MediaNames } from './media_names.js'
import { MediaStore } from './media_store.js'
import '../events.js'

/** The `media.purge` job's payload: files already marked deleted whose bytes go. */
export interface PurgeJob {
  ids: number[]
}

const PURGE_BATCH = 200

/**
 * What happens to stored files when what holds them changes (the books and
 * tables plugins' events; media depends on them, never the reverse):
 * - a deleted message, table row or book: its files are marked deleted at
 *   once (every /dbi form answers 404 from then on), their bytes and
 *   derivatives are removed by the `media.purge` job;
 * - a file cell whose value no longer lists a file: that file likewise;
 * - a copied message (copyOrMoveMessage): its files are duplicated for the
 *   copy (a hard link on the fs disk), so deleting the original, or moving
 *   it (copy, then delete), leaves the copy's files whole.
 */
@inject()
export class MediaLifecycle {
  constructor(
    private files: MediaFiles,
    private names: MediaNames,
    private store: MediaStore,
    private derivatives: DerivativeService,
    private messages: MessageWriter,
    private books: BookService,
    private values: ValuesService,
    private meta: MetaService,
    private queue: QueueService
  ) {}

  // ---- listeners (after commit) -------------------------------------------------

  async onMessageDeleted(event: Pick<BookMessageDeleted, 'book' | 'smid'>) {
    await this.retire({ message: { bookId: event.book.id, smid: event.smid } })
  }

  async onBookUpdated(event: Pick<BookUpdated, 'book' | 'changes'>) {
    if (!event.changes.includes('deleted')) return
    await this.retire({ bookId: event.book.id }, { bookGone: true })
  }

  /** A deleted field or table: the files of its cells. */
  async onFieldsDeleted(event: Pick<FieldsDeleted, 'fieldIds'>) {
    for (let at = 0; at < event.fieldIds.length; at += PURGE_BATCH) {
      const part = event.fieldIds.slice(at, at + PURGE_BATCH)
      await this.retire({ cellFieldIds: part })
    }
  }

  async onRowsChanged(event: RowsChanged) {
    // In parts: SQLite caps the parameters of one statement.
    for (let at = 0; at < event.deleted.length; at += PURGE_BATCH) {
      const part = event.deleted.slice(at, at + PURGE_BATCH)
      await this.retire({ cellRowIds: part })
    }
    if (event.fieldIds.length === 0 || this.writesNoFileField(event)) return
    for (let at = 0; at < event.modified.length; at += PURGE_BATCH)
      await this.reconcileCells(
        event.categoryId,
        event.modified.slice(at, at + PURGE_BATCH),
        event.fieldIds
      )
  }

  /**
   * Whether the table's cached metadata shows that none of the written fields holds files: then
   * no file can have left a cell, and the two queries of reconcileCells are spared (every
   * updateTableValue of a number or a text came here). Not cached, or a field it does not know:
   * reconciled.
   */
  private writesNoFileField(event: RowsChanged) {
    const fields = this.meta.cached(event.categoryId)?.category.fields
    if (!fields) return false
    return event.fieldIds.every((id) => {
      const field = fields.find((candidate) => candidate.id === id)
      return field !== undefined && field.type !== 'files'
    })
  }

  /**
   * Files of the written cells that their value no longer lists. A file is
   * given its row only once the cell that lists it was written (see
   * MediaService.attachToCell), so a file being attached is never taken for
   * a removed one.
   */
  private async reconcileCells(categoryId: number, rowIds: number[], fieldIds: number[]) {
    const attached = await this.files.liveInCells(rowIds, fieldIds)
    if (attached.length === 0) return
    const cells = await this.values.fileCells(
      categoryId,
      [...new Set(attached.map((file) => Number(file.field_id)))],
      [...new Set(attached.map((file) => Number(file.row_id)))]
    )
    // A table or field that is gone cannot say which files it lists: nothing is retired on a guess.
    if (cells === null) return
    const gone = attached.filter((file) => {
      const listed = cells.get(Number(file.row_id))?.get(Number(file.field_id))
      if (listed === undefined) return false
      return !listed.some((item) => item && typeof item === 'object' && item.uuid === file.uuid)
    })
    if (gone.length > 0) await this.retire({ ids: gone.map((file) => Number(file.id)) })
  }

  /**
   * copyOrMoveMessage copied the message's `medias` list as it was: the copy
   * gets files of its own (new uuid and internal name, the same bytes), and
   * its list is rewritten to name them.
   */
  async onMessageCreated(event: Pick<BookMessageCreated, 'book' | 'message' | 'copiedFrom'>) {
    const from = event.copiedFrom
    if (!from) return
    const smid = Number(event.message.smid)
    const originals = await this.files.liveOfMessage(from.bookId, from.smid)
    if (originals.length === 0) return
    const renamed = new Map<string, Record<string, unknown>>()
    for (const file of originals) {
      const { internName, key } = newStorageName(file.ext)
      await this.store.copy(file.storage_key, key)
      const stored = {
        uuid: randomUUID(),
        internName,
        key,
        originName: file.origin_name,
        ext: file.ext,
        mime: file.mime,
        kind: file.kind,
        size: Number(file.size),
        width: file.width,
        height: file.height,
      }
      const id = await this.files.record(stored, Number(file.owner_id), {
        purpose: 'message',
        book_id: event.book.id,
        smid,
      })
      renamed.set(file.uuid, { id, uuid: stored.uuid, internName })
    }
    const medias = parseList(event.message.medias)
    await this.messages.setAttachments(smid, {
      medias: medias.map((entry) => ({ ...entry, ...(renamed.get(entry?.uuid) ?? {}) })),
    })
    // As an upload would: a copied image becomes the target book's lastMedia.
    if (originals.some((file) => file.kind === 'image')) {
      const newest = await this.files.lastImage(event.book.id)
      if (newest) await this.books.setLastMedia(event.book.id, Number(newest.id))
    }
  }

  // ---- retiring and purging -------------------------------------------------------

  /**
   * Marks the live files of `selection` deleted (from now on no URL serves them)
   * and queues the removal of their bytes. Answers the ids.
   */
  async retire(selection: FileSelection, options: { bookGone?: boolean } = {}): Promise<number[]> {
    const files = await this.files.liveIn(selection)
    if (files.length === 0) return []
    const ids = files.map((file) => Number(file.id))
    for (let at = 0; at < ids.length; at += PURGE_BATCH) {
      const part = ids.slice(at, at + PURGE_BATCH)
      await this.files.markDeleted(part)
      await this.queue.dispatch('media.purge', { ids: part } satisfies PurgeJob)
    }
    const names = files.flatMap((file) => [file.uuid, file.intern_name])
    this.names.forget(names)
    emitter.emit('media:files_retired', { names })
    if (!options.bookGone) await this.refreshLastMedia(files)
    return ids
  }

  /**
   * A book's lastMedia is its newest image: when a retired image may have
   * been it (no live image of the book is newer), the newest live one (or 0)
   * takes its place, announced as a book update.
   */
  private async refreshLastMedia(files: Pick<MediaFile, 'id' | 'kind' | 'book_id'>[]) {
    const newestRetired = new Map<number, number>()
    for (const file of files) {
      if (file.kind !== 'image' || file.book_id === null) continue
      const bookId = Number(file.book_id)
      newestRetired.set(bookId, Math.max(newestRetired.get(bookId) ?? 0, Number(file.id)))
    }
    for (const [bookId, retiredId] of newestRetired) {
      const latest = await this.files.lastImage(bookId)
      if (latest && Number(latest.id) > retiredId) continue
      await this.books.setLastMedia(bookId, latest ? Number(latest.id) : 0)
    }
  }

  /**
   * The `media.purge` job: removes the bytes and derivatives of files marked
   * deleted. Idempotent (a missing file is not an error); a file that is
   * not marked deleted is left alone.
   */
  async purge(job: PurgeJob, logger?: Logger) {
    const ids = (job.ids ?? []).map(Number).filter(Number.isSafeInteger)
    if (ids.length === 0) return { purged: 0 }
    const files = await this.files.deletedAmong(ids)
    for (const file of files) {
      const derived = this.derivatives.keysOf(file)
      for (const key of [file.storage_key, ...derived]) {
        if ((await this.store.stat(key)) === null) continue
        await this.store.delete(key)
      }
      this.derivatives.forget(derived)
      logger?.debug({ id: file.id }, 'media file purged')
    }
    return { purged: files.length }
  }
}
