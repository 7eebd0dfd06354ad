import { randomUUID } from 'node:crypto'
import { inject } from '@adonisjs/core'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import env from '#start/env'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import type { UploadedFile } from '#core/rpc/params'
import { MessageAttachmentsService } from '#plugins/books/services/message_attachments_service'
import { CellFilesService, type FilesCellTarget } from '#plugins/tables/services/cell_files_service'
import { SharedLock } from '../lib/shared_lock.js'
import { serializeUpload, wireType } from '../serializers/upload_answer.js'
import { MediaFiles, newStorageName, type FilePlace, type StoredUpload } from './media_files.js'
import { MediaStore } from './media_store.js'
import { UploadChecks, type ResolvedTarget, type UploadTarget } from './upload_checks.js'

export type { MediaFile, StoredUpload } from './media_files.js'
export type { UploadTarget } from './upload_checks.js'

/**
 * Uploads, coordinated: the checks (UploadChecks), storage under a
 * server-made name (MediaStore), the record (MediaFiles), and the attach,
 * which the plugin holding the file does: the books plugin's
 * MessageAttachmentsService for a message, the tables plugin's
 * CellFilesService for a files cell. A failed attach leaves no file and no
 * row. Lookups of stored files are MediaNames' and MediaFiles'.
 */
@inject()
export class MediaService {
  /** One attach at a time per message or cell, across instances (see SharedLock). */
  private locks = new SharedLock(`quire-media:${env.get('DB_DATABASE', 'quire')}`)

  constructor(
    private store: MediaStore,
    private checks: UploadChecks,
    private files: MediaFiles,
    private messageAttachments: MessageAttachmentsService,
    private cellFiles: CellFilesService,
    private stamps: StampService
  ) {}

  // ---- storing --------------------------------------------------------------

  /**
   * Checks an uploaded file (UploadChecks.file) and moves it into storage
   * under a server-made name. Nothing is recorded yet: the caller records it
   * or discards it.
   */
  async storeUpload(
    upload: { tmpPath: string; clientName: string; size: number },
    uuid: string = randomUUID()
  ): Promise<StoredUpload> {
    const checked = await this.checks.file(upload)
    const { internName, key } = newStorageName(checked.ext)
    await this.store.putFile(key, upload.tmpPath)
    return {
      uuid,
      internName,
      key,
      originName: checked.originName,
      ext: checked.ext,
      mime: checked.mime,
      kind: checked.kind,
      size: upload.size,
      width: checked.width,
      height: checked.height,
    }
  }

  async storeFirst(file: UploadedFile | undefined, uuid?: string) {
    if (!file) throw rpcError('MISSING_PARAMETER', 'Missing file part: qqfile', { field: 'qqfile' })
    return this.storeUpload(file, uuid)
  }

  /** Records a stored file, in the caller's transaction when it gives one (`client`). */
  record(
    stored: StoredUpload,
    owner: number,
    where: FilePlace,
    client?: QueryClientContract
  ): Promise<number> {
    return this.files.record(stored, owner, where, client)
  }

  /** Undoes a store (and its record): a failed attach leaves no orphan file and no row. */
  async discard(stored: StoredUpload, id?: number) {
    if (id !== undefined) await this.files.remove(id)
    await this.store.delete(stored.key).catch(() => {})
  }

  // ---- fileUpload ------------------------------------------------------------

  /**
   * fileUpload (and a finished resumableUpload): the file attached to a
   * message (smid, or the message's uuid with b_o/b_c) or to a file cell
   * (rowId + fieldId; the book is worked out from them). The target is
   * checked before anything is stored.
   */
  async upload(actor: Actor, target: UploadTarget, file: UploadedFile | undefined) {
    const resolved = await this.checks.target(actor, target)
    const stored = await this.storeFirst(file, resolved.fileUuid)
    return resolved.kind === 'message'
      ? this.attachToMessage(actor, resolved.message, stored)
      : this.attachToCell(actor, resolved.cell, stored, target.bypassUrlTrigger)
  }

  /** Checks a target as upload() would, storing nothing (resumable upload creation). */
  async checkTarget(actor: Actor, target: UploadTarget) {
    await this.checks.target(actor, target)
  }

  private attachToMessage(
    actor: Actor,
    target: Extract<ResolvedTarget, { kind: 'message' }>['message'],
    stored: StoredUpload
  ) {
    const { smid, book } = target
    return this.locks.run(`msg:${smid}`, () =>
      this.undoneOnFailure(stored, actor.user.id, async (recorded) => {
        const id = await recorded({ purpose: 'message', book_id: book.id, smid })
        const attached = await this.messageAttachments.attach(
          actor,
          smid,
          {
            id,
            ext: stored.ext,
            originName: stored.originName,
            internName: stored.internName,
            uuid: stored.uuid,
            size: stored.size,
            type: wireType(stored.kind) as 'media' | 'doc',
            emailCid: '',
            del: false,
          },
          { image: stored.kind === 'image' }
        )
        return serializeUpload(stored, id, {
          smid,
          mdc: attached.sameType,
          book,
          sstamp: attached.sstamp,
        })
      })
    )
  }

  private attachToCell(
    actor: Actor,
    target: FilesCellTarget,
    stored: StoredUpload,
    bypassUrlTrigger: boolean | undefined
  ) {
    const { rowKey, field, book } = target
    return this.locks.run(`cell:${rowKey}:${field.id}`, () =>
      this.undoneOnFailure(stored, actor.user.id, async (recorded) => {
        // The row and field are set once the cell lists the file: until then no cell write's
        // reconciliation (MediaLifecycle) can take it for a file removed from the cell.
        const id = await recorded({ purpose: 'cell', book_id: book.id })
        const attached = await this.cellFiles.attach(
          actor,
          target,
          {
            id,
            uuid: stored.uuid,
            name: stored.originName,
            originName: stored.originName,
            internName: stored.internName,
            ext: stored.ext,
            size: stored.size,
            type: wireType(stored.kind),
            mime: stored.mime,
          },
          { bypassUrlTrigger }
        )
        await this.files.placeInCell(id, attached.rowId || null, field.id)
        return serializeUpload(stored, id, {
          rowId: attached.rowId,
          fieldId: field.id,
          mdc: attached.sameType,
          book,
          sstamp: await this.stamps.watermark(),
        })
      })
    )
  }

  /**
   * Runs an attach of a stored file (`recorded` records the file for it: a
   * message's, a cell's, a profile image); when it fails, the stored file and
   * its row go.
   */
  async undoneOnFailure<T>(
    stored: StoredUpload,
    owner: number,
    attach: (recorded: (where: FilePlace) => Promise<number>) => Promise<T>
  ): Promise<T> {
    let id: number | undefined
    try {
      return await attach(async (where) => {
        id = await this.record(stored, owner, where)
        return id
      })
    } catch (error) {
      await this.discard(stored, id)
      throw error
    }
  }
}
