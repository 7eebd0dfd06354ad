import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, text } from '#core/rpc/wire'
import { bookOf } from '#plugins/books/services/book_access_service'
import mediaConfig from '../config.js'
import { ProfileService } from '../services/profile_service.js'

const validator = vine.compile(
  vine.object({
    b_o: text().optional(),
    b_c: text().optional(),
    /** owner (ownerPrefs.oCoverImg) or member (the caller's userPrefs.uCoverImg). */
    as: text().optional(),
    /** A file of the book to use instead of an upload. */
    uuid: text().optional(),
    /** Use the book's last image. */
    useLast: flag().optional(),
  })
)

/** setBookCover (extension): a book's cover from an upload (`qqfile`), a file of the book, or its last image. */
@inject()
export default class SetBookCover extends BaseOperation {
  static operation = 'setBookCover'
  static writes = true
  /** No area: a cover is the book's; one taken from a file of the book is checked against that file's area. */
  static area = undefined
  /** Takes the multipart part `qqfile`: the body parser writes it, up to MEDIA_MAX_UPLOAD_BYTES. */
  static files = { maxBytes: mediaConfig.maxUploadBytes }
  static validator = validator

  constructor(private profiles: ProfileService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const actor = ctx.actor!
    const file = ctx.files.find((candidate) => candidate.field === 'qqfile') ?? ctx.files[0]
    return this.profiles.setBookCover(
      actor,
      { ...bookOf(actor, input), as: input.as, uuid: input.uuid, useLast: input.useLast },
      file
    )
  }
}
