import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import mediaConfig from '../config.js'
import { ProfileService } from '../services/profile_service.js'

const validator = vine.compile(vine.object({}))

/** setProfileImage (extension): multipart part `qqfile`, an image; answers uimgStamp and the /dbi/ui URLs. */
@inject()
export default class SetProfileImage extends BaseOperation {
  static operation = 'setProfileImage'
  static writes = true
  /** No area: the caller's own profile image. */
  static area = undefined
  /** Takes the multipart part `qqfile`: the body parser writes it, up to MEDIA_MAX_UPLOAD_BYTES. */
  static files = { maxBytes: mediaConfig.maxUploadBytes }
  static validator = validator

  constructor(private profiles: ProfileService) {
    super()
  }

  async handle(_input: unknown, ctx: OperationContext) {
    const file = ctx.files.find((candidate) => candidate.field === 'qqfile') ?? ctx.files[0]
    return this.profiles.setProfileImage(ctx.actor!, file)
  }
}
