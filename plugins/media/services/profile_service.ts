import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { UserService } from '#core/services/user_service'
import { BookAccessService, RIGHT_ADMIN } from '#plugins/books/services/book_access_service'
import { BookService } from '#plugins/books/services/book_service'
import type { UploadedFile } from '#core/rpc/params'
import mediaConfig from '../config.js'
import { areaOfFile, enforceMediaRestrictions } from '../lib/areas.js'
import { urlName } from '../serializers/upload_answer.js'
import { MediaFiles, type MediaFile } from './media_files.js'
import { MediaNames } from './media_names.js'
import { MediaService } from './media_service.js'

/**
 * Profile images (/dbi/ui) and book covers (ownerPrefs.oCoverImg,
 * userPrefs.uCoverImg): set from an upload, answered as paths this server
 * serves.
 */
@inject()
export class ProfileService {
  constructor(
    private media: MediaService,
    private files: MediaFiles,
    private names: MediaNames,
    private users: UserService,
    private bookAccess: BookAccessService,
    private books: BookService
  ) {}

  /** The profile image of user `code` as `actor` may see it: theirs, or a direct contact's. */
  async imageOf(actor: Actor, code: string): Promise<{ file: MediaFile; stamp: number } | null> {
    const ids = await this.users.idsOfCodes([code])
    const userId = ids.get(code)
    if (userId === undefined) return null
    if (userId !== actor.user.id && !(await this.bookAccess.isContact(actor.user.id, userId)))
      return null
    const file = await this.files.profileOf(userId)
    if (!file) return null
    const user = await this.users.findById(userId)
    return { file, stamp: Number(user?.uimgStamp ?? 0) }
  }

  /** setProfileImage (extension): the uploaded image becomes the user's; uimgStamp moves. */
  async setProfileImage(actor: Actor, upload: UploadedFile | undefined) {
    const stored = await this.media.storeFirst(upload)
    return this.media.undoneOnFailure(stored, actor.user.id, async (recorded) => {
      if (stored.kind !== 'image')
        throw rpcError('INVALID_PARAMETER', 'A profile image must be an image', { field: 'qqfile' })
      const id = await recorded({ purpose: 'profile' })
      const uimgStamp = await this.users.touchProfileImage(actor.user.id)
      await this.files.retireOtherProfiles(actor.user.id, id)
      const prefix = mediaConfig.urlPrefix
      return {
        uimgStamp,
        sstamp: uimgStamp,
        uuid: stored.uuid,
        url: `${prefix}/dbi/ui/tb/${actor.user.code}/${uimgStamp}`,
        urlFull: `${prefix}/dbi/ui/full/${actor.user.code}/${uimgStamp}`,
      }
    })
  }

  /**
   * setBookCover (extension): the book's cover from an upload, from a file of
   * the book (uuid), or the book's last image (useLast). `as` owner sets
   * ownerPrefs.oCoverImg (RIGHT_ADMIN), member the caller's userPrefs.uCoverImg;
   * by default owner for an administrator, member otherwise.
   */
  async setBookCover(
    actor: Actor,
    input: { b_o: string; b_c: string; as?: string; uuid?: string; useLast?: boolean },
    upload: UploadedFile | undefined
  ) {
    const book = await this.bookAccess.resolveFor(actor, input.b_o, input.b_c, 'read')
    const right = (await this.bookAccess.rightOf(actor.user.id, book.id)) ?? 0
    const as = input.as ?? (right >= RIGHT_ADMIN ? 'owner' : 'member')
    if (as !== 'owner' && as !== 'member')
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter as: owner or member', { field: 'as' })
    const prefix = as === 'owner' ? 'o' : 'u'

    let file: MediaFile | null = null
    let stored: Awaited<ReturnType<MediaService['storeFirst']>> | null = null
    let id: number | undefined
    try {
      if (input.useLast) {
        file = await this.files.lastImage(book.id)
      } else if (input.uuid) {
        file = await this.names.byName(input.uuid)
        if (!file || file.book_id !== book.id) throw rpcError('NOT_FOUND', 'File not found')
      } else {
        stored = await this.media.storeFirst(upload)
        if (stored.kind !== 'image')
          throw rpcError('INVALID_PARAMETER', 'A cover must be an image', { field: 'qqfile' })
        id = await this.media.record(stored, actor.user.id, { purpose: 'cover', book_id: book.id })
        file = await this.names.byName(stored.uuid)
      }
      // A file of the book is part of its area: a session hiding it may not make it a cover.
      if (file && !stored)
        enforceMediaRestrictions(
          actor,
          { label: 'This cover', writes: true, area: areaOfFile(file) },
          book
        )
      if (file && file.kind !== 'image')
        throw rpcError('INVALID_PARAMETER', 'A cover must be an image', { field: 'uuid' })
      const path = file
        ? `${mediaConfig.urlPrefix}/dbi/in/cover/${file.intern_name}/${urlName(file)}`
        : null
      const prefs = {
        [`${prefix}CoverImg`]: path,
        [`${prefix}CoverUseLastImg`]: Boolean(input.useLast),
      }
      if (as === 'owner') await this.books.update(actor, book.b_o, book.b_c, { ownerPrefs: prefs })
      else await this.books.updateUserPrefs(actor, book.b_o, book.b_c, { userPrefs: prefs })
      return { b_o: book.b_o, b_c: book.b_c, as, ...prefs }
    } catch (error) {
      if (stored) await this.media.discard(stored, id)
      throw error
    }
  }
}
