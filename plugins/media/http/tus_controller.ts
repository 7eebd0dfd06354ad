import { AsyncLocalStorage } from 'node:async_hooks'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import { Server, type ServerOptions } from '@tus/server'
import { FileStore } from '@tus/file-store'
import type { Upload } from '@tus/utils'
import { credentialsOf, resolveActor } from '#core/auth/resolve_actor'
import { RpcError } from '#core/rpc/errors'
import { mergeParams, parseBody, parseQuery, type Params } from '#core/rpc/params'
import { AccessService } from '#core/services/access_service'
import { UserService } from '#core/services/user_service'
import mediaConfig from '../config.js'
import { MEDIA_CSP } from './send_file.js'
import { MediaService, type UploadTarget } from '../services/media_service.js'
import { TusUploads, openSesskey, sealSesskey } from '../services/tus_uploads.js'

type TusRequest = Parameters<NonNullable<ServerOptions['onUploadCreate']>>[0]

/**
 * Fields of the upload's metadata (Upload-Metadata header, or the creation's
 * query string). The sesskey is not among them: it is kept sealed.
 */
const KEPT = ['version', 'o_u', 'u_c', 'b_o', 'b_c', 'uuid', 'rowId', 'fieldId', 'smid']

/**
 * FileStore with the expiration extension on MEDIA_TUS_EXPIRY_HOURS (read on
 * each use): creation and PATCH answers carry `Upload-Expires`, PATCH and
 * HEAD of an expired upload answer 410. TusUploads removes expired ones.
 */
class ExpiringFileStore extends FileStore {
  getExpiration() {
    return TusUploads.expiryMs()
  }
}

/**
 * The origin of the request being handled, as AdonisJS believes it: the
 * X-Forwarded-Host / -Proto of a proxy in TRUSTED_PROXIES (config/app.ts
 * trustProxy), the request's own Host and protocol otherwise. tus's own
 * reading of forwarded headers trusts any client, so it is not used.
 */
const requestOrigin = new AsyncLocalStorage<{ proto: string; host: string }>()

/** A PATCH (or one overridden to PATCH) carries its chunk as application/offset+octet-stream. */
function patchTypeAccepted(ctx: HttpContext) {
  const req = ctx.request.request
  const method = String(req.headers['x-http-method-override'] ?? req.method).toUpperCase()
  if (method !== 'PATCH') return true
  const type = String(req.headers['content-type'] ?? '')
  return type.split(';')[0].trim().toLowerCase() === 'application/offset+octet-stream'
}

/** A file's size, 0 when it does not exist. */
async function sizeOf(path: string) {
  const info = await stat(path).catch(() => null)
  return info?.size ?? 0
}

const refuse = (status_code: number, body: string) => ({ status_code, body })

/** The HTTP status of a refused creation (400 for any other code). */
const STATUS_OF: Record<string, number> = {
  NOT_FOUND: 404,
  // The session's restrictions (kernel's enforceRestrictions: hidden area, read-only, another book).
  RESTRICTED_SESSION: 403,
  READONLY_SESSION: 403,
  FORBIDDEN: 403,
}

const digits = (value: unknown) => {
  const text = String(value ?? '').trim()
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined
}

/**
 * resumableUpload (spec 4.A.5) with @tus/server: POST {prefix}/upload creates
 * an upload (tus creation; parameters as Upload-Metadata or query string),
 * HEAD answers its offset, PATCH appends a chunk. Chunks go to files under
 * MEDIA_TUS_DIR (FileStore keeps offset and metadata on disk, so an upload
 * survives a restart and resumes from its offset). When offset = size the
 * file is attached as fileUpload would, and `GET {prefix}/upload/upload_meta/{id}`
 * answers the 2.11 metadata.
 */
@inject()
export default class TusController {
  private server: Server
  private directory = mediaConfig.tusDir

  constructor(
    private media: MediaService,
    private access: AccessService,
    private users: UserService
  ) {
    mkdirSync(this.directory, { recursive: true })
    this.server = new Server({
      path: `${mediaConfig.urlPrefix}/upload`,
      datastore: new ExpiringFileStore({ directory: this.directory }),
      maxSize: mediaConfig.maxUploadBytes,
      // Never the client's forwarded headers: the Location is built from requestOrigin.
      respectForwardedHeaders: false,
      // Unguessable ids: the id is what PATCH and HEAD present.
      namingFunction: () => randomBytes(16).toString('hex'),
      // The Location keeps the environment prefix the client used.
      generateUrl: (req, { id }) => {
        const pathname = new URL(req.url).pathname.replace(/\/+$/, '')
        const origin = requestOrigin.getStore()
        return `${origin?.proto ?? 'http'}://${origin?.host ?? ''}${pathname}/${id}`
      },
      onUploadCreate: (req, upload) => this.onCreate(req, upload),
      onUploadFinish: (req, upload) => this.onFinish(req, upload),
    })
  }

  async handle(ctx: HttpContext) {
    // Every upload answer (tus sets its own headers after this one, never this).
    ctx.response.response.setHeader('Content-Security-Policy', MEDIA_CSP)
    if (!patchTypeAccepted(ctx)) {
      // tus 1.0.0: a PATCH of any other type is 415 (@tus/server answers 403).
      ctx.response.response.writeHead(415, {
        'Tus-Resumable': '1.0.0',
        'Content-Type': 'text/plain',
      })
      ctx.response.response.end('Content-Type must be application/offset+octet-stream\n')
      return
    }
    const origin = {
      proto: ctx.request.protocol() === 'https' ? 'https' : 'http',
      host: ctx.request.host() ?? '',
    }
    await requestOrigin.run(origin, () =>
      this.server.handle(ctx.request.request, ctx.response.response)
    )
  }

  private async actorOf(params: Params) {
    const credentials = credentialsOf(params)
    if (credentials.sesskey === '' || credentials.o_u === '') return null
    return resolveActor(this.access, this.users, credentials).catch(() => null)
  }

  private targetOf(params: Params): UploadTarget {
    return {
      smid: digits(params.smid),
      uuid: params.uuid ? String(params.uuid) : undefined,
      rowId: params.rowId ? String(params.rowId) : undefined,
      fieldId: digits(params.fieldId),
      b_o: params.b_o ? String(params.b_o) : undefined,
      b_c: params.b_c ? String(params.b_c) : undefined,
    }
  }

  /** Creation: the caller's session and the target are checked before a byte is accepted. */
  private async onCreate(req: TusRequest, upload: Upload) {
    const params: Params = { ...parseQuery(req.url), ...(upload.metadata ?? {}) }
    const actor = await this.actorOf(params)
    if (!actor) throw refuse(403, 'A valid o_u and sesskey are required\n')
    try {
      await this.media.checkTarget(actor, this.targetOf(params))
    } catch (error) {
      if (error instanceof RpcError)
        throw refuse(STATUS_OF[error.code] ?? 400, `${error.code}: ${error.message}\n`)
      throw error
    }
    const metadata: Record<string, string | null> = { ...(upload.metadata ?? {}) }
    for (const name of KEPT) if (params[name] !== undefined) metadata[name] = String(params[name])
    // The completion acts with the creator's session; the record on disk holds it sealed only.
    delete metadata.sesskey
    metadata.sealedSesskey = sealSesskey(credentialsOf(params).sesskey)
    return { metadata }
  }

  /** offset = size: attach the file, keep the answer for upload_meta. */
  private async onFinish(_req: TusRequest, upload: Upload) {
    const metadata = upload.metadata ?? {}
    const path = join(this.directory, upload.id)
    let result: Record<string, unknown>
    try {
      const actor = await this.actorOf({ ...metadata, sesskey: openSesskey(metadata) })
      if (!actor)
        throw new RpcError('INVALID_SESSKEY', 'The session of this upload is no longer valid')
      const answer = await this.media.upload(actor, this.targetOf(metadata), {
        field: 'qqfile',
        clientName: String(metadata.filename ?? metadata.name ?? ''),
        mimeType: String(metadata.filetype ?? ''),
        size: upload.size ?? (await sizeOf(path)),
        tmpPath: path,
      })
      result = { ...answer, status: 'ok' }
    } catch (error) {
      const rpc = error instanceof RpcError ? error : null
      result = {
        success: false,
        status: 'nok',
        errorCode: rpc?.code ?? 'INTERNAL_ERROR',
        errorMsg: rpc?.message ?? 'The upload could not be attached',
      }
    }
    // The chunks file was moved into storage (or is refused): only the record stays.
    await rm(path, { force: true })
    await writeFile(this.resultPath(upload.id), JSON.stringify(result))
    return {
      status_code: result.success ? 204 : 400,
      headers: { 'Upload-Result': String(result.status) },
      body: result.success ? undefined : `${result.errorCode}: ${result.errorMsg}\n`,
    }
  }

  private resultPath(id: string) {
    return join(this.directory, `${id}.result.json`)
  }

  /**
   * GET {upload_url}/upload_meta/{fileId}: the upload's metadata (2.11), for
   * its uploader only (o_u + sesskey as query or form); 404 for anyone else.
   */
  async meta(ctx: HttpContext) {
    const res = ctx.response.response
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'Content-Security-Policy': MEDIA_CSP,
      })
      res.end(body === undefined ? '' : JSON.stringify(body))
    }
    const id = String(ctx.params.fileId ?? '')
    if (!/^[0-9a-f]{32}$/.test(id)) return send(404)
    const req = ctx.request.request
    let params = parseQuery(req.url)
    if (req.method === 'POST') {
      const parsed = await parseBody(req, { maxFormBytes: 1024 * 1024, maxFileBytes: 0 }).catch(
        () => null
      )
      await parsed?.cleanup()
      params = mergeParams(params, parsed?.params ?? {})
    }
    const actor = await this.actorOf(params)
    const info = await readFile(join(this.directory, `${id}.json`), 'utf8')
      .then(
        (text) =>
          JSON.parse(text) as {
            size?: number
            offset?: number
            metadata?: Record<string, string>
            creation_date?: string
          }
      )
      .catch(() => null)
    if (!actor || !info) return send(404)
    const metadata = info.metadata ?? {}
    const owner = await this.users.findByLogin(String(metadata.o_u ?? ''))
    if (!owner || owner.id !== actor.principal.id) return send(404)
    const result = await readFile(this.resultPath(id), 'utf8')
      .then((text) => JSON.parse(text) as Record<string, unknown>)
      .catch(() => null)
    const offset = result ? Number(info.size ?? 0) : await sizeOf(join(this.directory, id))
    send(200, {
      ...result,
      success: Boolean(result?.success),
      status: result ? result.status : 'uploading',
      fileId: id,
      offset,
      filesize: Number(info.size ?? 0),
      filetype: result?.filetype ?? metadata.filetype ?? '',
      filelastmodified: metadata.filelastmodified ?? metadata.lastModified ?? '',
      originName: result?.originName ?? metadata.filename ?? metadata.name ?? '',
      version: metadata.version ?? '',
      o_u: metadata.o_u ?? '',
      u_c: metadata.u_c ?? metadata.o_u ?? '',
      b_o: result?.b_o ?? metadata.b_o ?? '',
      b_c: result?.b_c ?? metadata.b_c ?? '',
      sesskey: String(params.sesskey ?? ''),
      sstamp: result?.sstamp ?? 0,
    })
  }
}
