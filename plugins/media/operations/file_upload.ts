import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp, text } from '#core/rpc/wire'
import mediaConfig from '../config.js'
import { MediaService } from '../services/media_service.js'

const validator = vine.compile(
  vine.object({
    b_o: text().optional(),
    b_c: text().optional(),
    smid: stamp().optional(),
    /** The message's uuid (2.14g): finds the message in b_o/b_c when smid is not known yet. */
    uuid: text().optional(),
    rowId: text().optional(),
    fieldId: stamp().optional(),
    bypassUrlTrigger: flag().optional(),
  })
)

/**
 * fileUpload (spec 4.A.5): multipart part `qqfile`, attached to a message
 * (smid) or to a file cell (rowId + fieldId). Answers the fields of 2.11 and
 * the cell-upload fields real clients read (plugins/media/README.md).
 */
@inject()
export default class FileUpload extends BaseOperation {
  static operation = 'fileUpload'
  static writes = true
  /**
   * No static area: it is the target's, messages for a message and tables for
   * a file cell. MediaService runs the kernel's enforceRestrictions with it
   * before any lookup (tests/authz lists fileUpload as "by target").
   */
  static area = undefined
  /** Takes the multipart part `qqfile`: the body parser writes it, up to MEDIA_MAX_UPLOAD_BYTES. */
  static files = { maxBytes: mediaConfig.maxUploadBytes }
  static validator = validator

  constructor(private media: MediaService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const file = ctx.files.find((candidate) => candidate.field === 'qqfile') ?? ctx.files[0]
    return this.media.upload(
      ctx.actor!,
      {
        smid: input.smid || undefined,
        uuid: input.uuid,
        rowId: input.rowId,
        fieldId: input.fieldId,
        b_o: input.b_o,
        b_c: input.b_c,
        bypassUrlTrigger: input.bypassUrlTrigger,
      },
      file
    )
  }
}
