import type { IncomingMessage } from 'node:http'
import { buffer } from 'node:stream/consumers'
import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import type { Actor, OperationArea } from '#core/rpc/base_operation'
import { mergeParams, parseBody, parseQuery } from '#core/rpc/params'
import { credentialsOf, resolveActor } from '#core/auth/resolve_actor'
import { AccessService } from '#core/services/access_service'
import { UserService } from '#core/services/user_service'
import { BookAccessService, type BookRef } from '#plugins/books/services/book_access_service'
import mediaConfig from '../config.js'
import { areaOfFile, enforceMediaRestrictions } from '../lib/areas.js'
import { ByteCache } from '../lib/byte_cache.js'
import { isDecodableImage } from '../lib/sniff.js'
import {
  DerivativeService,
  DerivativesBusyError,
  ICONS_DIR,
  iconOf,
} from '../services/derivative_service.js'
import { clientUuid, isOpenUuid } from '../lib/client_uuid.js'
import { urlName } from '../serializers/upload_answer.js'
import { MediaFiles, type MediaFile } from '../services/media_files.js'
import { MediaNames } from '../services/media_names.js'
import { MediaStore } from '../services/media_store.js'
import { ProfileService } from '../services/profile_service.js'
import { heldFile, sendFile, sendStatus, shippedFile, type Servable } from './send_file.js'

const SIZES = new Set(['norm', 'tb', 'cover', 'full'])
const FORMS = new Set([
  'ic',
  'oic',
  'dc',
  'odc',
  'ii',
  'oii',
  'di',
  'odi',
  'in',
  'oin',
  'dn',
  'odn',
  'last',
  'ui',
])
/** Forms that need no session (4.A.4): the internal name or uuid is the key. */
const OPEN_FORMS = new Set(['in', 'dn', 'odn'])
/**
 * Forms that answer the original whatever the size segment: the media-file
 * forms (spec 4.A.4: "for the media-file forms the size currently has no
 * effect") and the open-document forms.
 */
const ORIGINAL_FORMS = new Set(['oic', 'oii', 'oin', 'odc', 'odi', 'odn'])
const sizeFor = (form: string, size: string) => (ORIGINAL_FORMS.has(form) ? 'full' : size)
/** Forms that name a message: its attachments are part of the messages area. */
const MESSAGE_FORMS = new Set(['ic', 'oic', 'dc', 'odc'])
const BODY_LIMITS = { maxFormBytes: 1024 * 1024, maxFileBytes: 0 }

/** Inline types a browser shows or plays itself; everything else downloads. */
const INLINE = (file: MediaFile) => file.kind !== 'doc' || file.mime === 'application/pdf'

const IMMUTABLE = 'public, max-age=31536000, immutable'
const PRIVATE = 'private, max-age=3600'

/** A refusal: 403 (no valid session) or 404 (anything else), without details. */
class Refused extends Error {
  constructor(readonly status: 403 | 404 | 503) {
    super(String(status))
  }
}
const notFound = () => new Refused(404)

const decode = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/**
 * The /dbi URL family (spec 4.A.4) under every environment prefix. Session-
 * bound forms take version, o_u, u_c, sesskey as POST form, query string or
 * plain GET parameters; a caller without a valid session gets 403 whatever
 * the path names, a member of no such book or file 404: a stranger learns
 * nothing, not even whether a file exists.
 */
@inject()
export default class MediaController {
  /** Small stored files (thumbnails above all) served from memory: see ByteCache. */
  private memory = new ByteCache(mediaConfig.memoryCacheBytes, mediaConfig.memoryCacheLargest)

  constructor(
    private names: MediaNames,
    private files: MediaFiles,
    private derivatives: DerivativeService,
    private store: MediaStore,
    private profiles: ProfileService,
    private bookAccess: BookAccessService,
    private access: AccessService,
    private users: UserService
  ) {}

  async handle(ctx: HttpContext) {
    const req = ctx.request.request
    const res = ctx.response.response
    try {
      const path = ctx.request.url()
      const at = path.indexOf('/dbi/')
      const segments = path
        .slice(at + 5)
        .split('/')
        .filter((segment) => segment !== '')
        .map(decode)
      const servable = await this.resolve(req, segments)
      await sendFile(req, res, servable)
    } catch (error) {
      if (error instanceof Refused) return sendStatus(res, error.status)
      ctx.logger.error({ err: error }, 'media URL failed')
      sendStatus(res, 500)
    }
  }

  private async resolve(req: IncomingMessage, segments: string[]): Promise<Servable> {
    const [form, rawSize] = segments
    if (!FORMS.has(form)) throw notFound()
    const size = rawSize === '_tb' ? 'tb' : rawSize
    if (form === 'ui') return this.profileImage(req, segments)
    if (!SIZES.has(size)) throw notFound()
    if (OPEN_FORMS.has(form)) {
      const file = await this.findByName(segments, true)
      if (!file) throw notFound()
      return this.render(file, sizeFor(form, size), IMMUTABLE)
    }
    const actor = await this.actorOf(req)
    if (!actor) throw new Refused(403)
    // The message forms name their area in the path: refused before any lookup.
    if (MESSAGE_FORMS.has(form)) this.restrict(actor, 'messages', segments[2], segments[3])
    if (form === 'oin') {
      const file = await this.findByName(segments)
      if (!file || !(await this.names.visibleTo(actor, file))) throw notFound()
      this.restrict(actor, areaOfFile(file))
      return this.render(file, sizeFor(form, size), PRIVATE)
    }
    const book = await this.bookFor(actor, segments[2], segments[3])
    let file: MediaFile | null = null
    switch (form) {
      case 'ic':
      case 'oic':
      case 'dc':
      case 'odc': {
        const smid = this.idOf(segments[4])
        const mdc = this.idOf(segments[5])
        const type = form === 'ic' || form === 'oic' ? 'media' : 'doc'
        file = await this.files.byCount(book.id, smid, type, mdc)
        break
      }
      case 'ii':
      case 'oii':
      case 'di':
      case 'odi':
        file = await this.files.byId(book.id, this.idOf(segments[4]))
        break
      case 'last':
        file = await this.files.lastImage(book.id)
        if (!file) throw notFound()
        this.restrict(actor, areaOfFile(file), book.b_o, book.b_c)
        return this.render(file, size, 'private, no-cache')
    }
    if (!file) throw notFound()
    this.restrict(actor, areaOfFile(file), book.b_o, book.b_c)
    return this.render(file, sizeFor(form, size), PRIVATE)
  }

  /**
   * The kernel's restriction step for a session-bound form: a session hiding
   * the file's area (hideMessages, hideTables) or restricted to another book
   * gets 403, as api.php refuses it RESTRICTED_SESSION.
   */
  private restrict(actor: Actor, area: OperationArea | undefined, b_o?: string, b_c?: string) {
    try {
      enforceMediaRestrictions(
        actor,
        { label: 'This media URL', writes: false, area },
        { b_o, b_c }
      )
    } catch {
      throw new Refused(403)
    }
  }

  private idOf(segment: string | undefined) {
    if (!segment || !/^\d{1,15}$/.test(segment)) throw notFound()
    return Number(segment)
  }

  /**
   * The name segment: right after the size, or after b_o and b_c (the oin
   * example). The open forms take an internal name or a random (version 4)
   * uuid only: a client's guessable uuid is no key (README, "Client uuids").
   */
  private async findByName(segments: string[], open = false) {
    for (const index of [2, 4]) {
      const candidate = segments[index]?.toLowerCase()
      if (!candidate) continue
      if (open && clientUuid(candidate) && !isOpenUuid(candidate)) continue
      const file = await this.names.byName(candidate)
      if (file) return file
    }
    return null
  }

  private async params(req: IncomingMessage) {
    const query = parseQuery(req.url)
    if (req.method !== 'POST') return query
    const parsed = await parseBody(req, BODY_LIMITS).catch(() => null)
    await parsed?.cleanup()
    return mergeParams(query, parsed?.params ?? {})
  }

  /** The caller's session, or null (missing, unknown, expired or mismatched). */
  private async actorOf(req: IncomingMessage): Promise<Actor | null> {
    const credentials = credentialsOf(await this.params(req))
    if (credentials.sesskey === '' || credentials.o_u === '') return null
    try {
      return await resolveActor(this.access, this.users, credentials)
    } catch {
      return null
    }
  }

  private async bookFor(actor: Actor, b_o?: string, b_c?: string): Promise<BookRef> {
    try {
      return await this.bookAccess.resolveFor(actor, b_o ?? '', b_c ?? '', 'read')
    } catch {
      throw notFound()
    }
  }

  /** A file at a size: derivatives for images, the file itself for audio/video, an icon for a document's tb. */
  private async render(file: MediaFile, size: string, cacheControl: string): Promise<Servable> {
    const fileName = file.origin_name || urlName(file)
    const disposition = INLINE(file) ? 'inline' : 'attachment'
    if (size !== 'full') {
      if (file.kind === 'image' && isDecodableImage(file.ext)) {
        let derived: { key: string; mime: string }
        try {
          derived = await this.derivatives.derivative(file, size)
        } catch (error) {
          if (error instanceof DerivativesBusyError) throw new Refused(503)
          // A corrupt image has no derivatives: its icon stands in.
          return shippedFile(iconOf(file), cacheControl)
        }
        return this.stored(derived.key, derived.mime, 'inline', fileName, cacheControl)
      }
      if (file.kind === 'doc' || size === 'tb') return shippedFile(iconOf(file), cacheControl)
    }
    return this.stored(file.storage_key, file.mime, disposition, fileName, cacheControl)
  }

  private async stored(
    key: string,
    mime: string,
    disposition: 'inline' | 'attachment',
    fileName: string,
    cacheControl: string
  ): Promise<Servable> {
    const served = { mime, disposition, fileName, cacheControl }
    const held = this.memory.get(key)
    if (held) return heldFile(held.bytes, held.lastModified, served)
    const info = await this.store.stat(key)
    if (!info) throw notFound()
    if (this.memory.accepts(info.size)) {
      const bytes = await buffer(await this.store.read(key))
      // Keys are never reused, so the bytes read now stay right for good.
      if (bytes.length === info.size)
        this.memory.set(key, { bytes, lastModified: info.lastModified })
      return heldFile(bytes, info.lastModified, served)
    }
    return { ...info, ...served, open: (range) => this.store.read(key, range) }
  }

  /**
   * /dbi/ui/{tb|full}/{userId}/{sstamp}: any other size is tb; a requester
   * who is not the user or a direct contact gets the default icon. The URL
   * with the current stamp may be cached for good; another stamp may not.
   */
  private async profileImage(req: IncomingMessage, segments: string[]): Promise<Servable> {
    const size = segments[1] === 'full' ? 'full' : 'tb'
    const defaultIcon = () => shippedFile(`${ICONS_DIR}/user.png`, 'private, no-cache')
    const actor = await this.actorOf(req)
    const userCode = segments[2] ?? ''
    if (!actor || userCode === '') return defaultIcon()
    const current = await this.profiles.imageOf(actor, userCode)
    if (!current) return defaultIcon()
    const fresh = segments[3] === String(current.stamp)
    return this.render(
      current.file,
      size,
      fresh ? 'private, max-age=31536000, immutable' : 'private, no-cache'
    )
  }
}
