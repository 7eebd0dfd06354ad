import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { MessageAttachmentsService } from '#plugins/books/services/message_attachments_service'
import { CellFilesService } from '#plugins/tables/services/cell_files_service'
import mediaConfig from '../config.js'
import { enforceMediaRestrictions } from '../lib/areas.js'
import { clientUuid } from '../lib/client_uuid.js'
import { identify, isDecodableImage, sniffFile } from '../lib/sniff.js'
import { CorruptImageError, DerivativeService, ImageTooLargeError } from './derivative_service.js'
import { duplicateUuid, MediaFiles } from './media_files.js'

/** Where an upload goes: a message (smid, or the message uuid with its book) or a file cell. */
export interface UploadTarget {
  smid?: number
  uuid?: string
  rowId?: string
  fieldId?: number
  b_o?: string
  b_c?: string
  bypassUrlTrigger?: boolean
}

/** A checked target (UploadChecks.target): the message or cell, and the uuid the file takes. */
export type ResolvedTarget = Awaited<ReturnType<UploadChecks['target']>>

/**
 * What an upload must pass before anything is stored: the file (size,
 * content type from its bytes, pixel count of images from the header) and
 * the target (the session's restrictions for its area, then the books or
 * tables plugin's own checks of the message or cell, the client's uuid).
 */
@inject()
export class UploadChecks {
  constructor(
    private derivatives: DerivativeService,
    private files: MediaFiles,
    private messages: MessageAttachmentsService,
    private cells: CellFilesService
  ) {}

  /** The file's kind, extension, type and (images) size; refuses what may not be stored. */
  async file(upload: { tmpPath: string; clientName: string; size: number }) {
    if (upload.size > mediaConfig.maxUploadBytes)
      throw rpcError(
        'PAYLOAD_TOO_LARGE',
        `The file exceeds ${mediaConfig.maxUploadBytes} bytes (MEDIA_MAX_UPLOAD_BYTES)`
      )
    if (upload.size === 0)
      throw rpcError('INVALID_PARAMETER', 'The file is empty', { field: 'qqfile' })
    const originName = String(upload.clientName ?? '')
      .replace(/^.*[\\/]/, '')
      .slice(0, 255)
    const found = identify(await sniffFile(upload.tmpPath), originName)
    let width: number | null = null
    let height: number | null = null
    if (found.kind === 'image' && isDecodableImage(found.ext)) {
      try {
        ;({ width, height } = await this.derivatives.probe(upload.tmpPath))
      } catch (error) {
        if (error instanceof ImageTooLargeError)
          throw rpcError('PAYLOAD_TOO_LARGE', `${error.message} (MEDIA_MAX_PIXELS)`)
        if (error instanceof CorruptImageError)
          throw rpcError('INVALID_PARAMETER', `Corrupt image: ${error.message}`, {
            field: 'qqfile',
          })
        throw error
      }
    }
    return { ...found, originName: originName || `file.${found.ext}`, width, height }
  }

  /**
   * The upload's target: a message (smid, or its uuid with b_o/b_c) or a
   * file cell (rowId + fieldId). `fileUuid` is the client's uuid for the
   * file, when it sent one that names no message and no other file.
   */
  async target(actor: Actor, target: UploadTarget) {
    const isCell = target.fieldId !== undefined || (target.rowId ?? '') !== ''
    // The target's area, known before any lookup: a session hiding it learns nothing of it.
    enforceMediaRestrictions(
      actor,
      { label: 'This upload', writes: true, area: isCell ? 'tables' : 'messages' },
      target
    )
    const resolved = isCell
      ? { kind: 'cell' as const, cell: await this.cells.target(actor, target) }
      : { kind: 'message' as const, message: await this.messageTarget(actor, target) }
    // The client's uuid names the file, unless it named the message (no smid: 2.14g).
    const named = resolved.kind === 'message' && resolved.message.uuidNamesMessage
    const fileUuid = named ? undefined : clientUuid(target.uuid)
    if (fileUuid && (await this.files.uuidTaken(fileUuid))) throw duplicateUuid()
    return { ...resolved, fileUuid }
  }

  private async messageTarget(actor: Actor, target: UploadTarget) {
    if (!target.smid && !target.uuid)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: smid (or rowId and fieldId)', {
        field: 'smid',
      })
    return this.messages.target(actor, target)
  }
}
