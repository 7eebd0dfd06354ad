import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import logger from '@adonisjs/core/services/logger'
import { readJsonTexts } from '#core/rpc/answer_json'
import type { Actor } from '#core/rpc/base_operation'
import { RpcError } from '#core/rpc/errors'
import { toRpcError } from '#core/rpc/failure'
import type { UploadedFile } from '#core/rpc/params'
import { validateWire } from '#core/rpc/wire'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { enforceRestrictions } from '#core/auth/restrictions'
import { NO_RESTRICTIONS } from '#models/api_session'
import type ApiSession from '#models/api_session'
import type User from '#models/user'
import { localFiles } from './local_files.js'

/** The interface's version label sent to a remote server (client-facts: any value is accepted). */
const VERSION = '6.49'

/** Longest wait for one answer of the remote server (a file download included). */
const REQUEST_TIMEOUT_MS = 120_000
/** Waits before the second and third attempt of a call that failed in transit or on a deadlock. */
const RETRY_DELAYS_MS = [500, 2000]
const RETRIED = new Set(['TRANSPORT', 'DEADLOCK'])

/** A `nok` answer (or a transport failure) of one call: its errorCode and errorMsg. */
export class InterfaceError extends Error {
  constructor(
    readonly req: string,
    readonly code: string,
    readonly reason: string
  ) {
    super(`${req}: ${code} ${reason}`)
  }
}

/** A file the interface serves: a message's media or a file cell's entry. */
export interface FileRef {
  b_o: string
  b_c: string
  /** The media id (message files) when known. */
  id?: number
  /** 'media' (images, audio, video) or 'doc'. */
  type: string
  uuid?: string
  internName?: string
}

/**
 * What the transfer reads and writes through: the operations of the interface (api.php's
 * `req` and parameters), and its files. Two implementations: a remote server over HTTP, and
 * this server in process (the same operation classes api.php runs, as one local user).
 */
export interface InterfaceClient {
  /** The answer of one operation; throws InterfaceError on `nok`. */
  call(req: string, params?: Record<string, unknown>): Promise<Record<string, any>>
  /** The original bytes of a file, or null when the server does not serve it. */
  download(file: FileRef): Promise<Buffer | null>
}

/** Nested values go as JSON strings (client-facts: both the JSON and the bracket form are read). */
function formOf(params: Record<string, unknown>) {
  const form = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue
    form.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value))
  }
  return form
}

/**
 * A server speaking the interface, reached over HTTP: signed in with login and password (the
 * key flow: createAppkey, createOauthkey, createSesskey) or with an existing o_u + sesskey.
 */
export class RemoteClient implements InterfaceClient {
  private credentials: { o_u: string; u_c: string; sesskey: string } | null = null

  constructor(readonly baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '')
  }

  get userCode() {
    return this.credentials?.o_u ?? ''
  }

  async signIn(input: { login?: string; password?: string; o_u?: string; sesskey?: string }) {
    if (input.o_u && input.sesskey) {
      this.credentials = { o_u: input.o_u, u_c: input.o_u, sesskey: input.sesskey }
      return
    }
    if (!input.login || !input.password) {
      throw new InterfaceError(
        'signIn',
        'MISSING_PARAMETER',
        'give --login and --password, or --o-u and --sesskey'
      )
    }
    const { appkey } = await this.post({ req: 'createAppkey', appname: 'Quire import' })
    const oauth = await this.post({
      req: 'createOauthkey',
      login: input.login,
      pwd: input.password,
      appkey,
    })
    const session = await this.post({
      req: 'createSesskey',
      o_u: oauth.o_u,
      u_c: oauth.o_u,
      oauthkey: oauth.oauthkey,
    })
    this.credentials = { o_u: String(oauth.o_u), u_c: String(oauth.o_u), sesskey: session.sesskey }
  }

  call(req: string, params: Record<string, unknown> = {}) {
    if (!this.credentials) throw new InterfaceError(req, 'NOT_SIGNED_IN', 'sign in first')
    return this.post({ ...params, ...this.credentials, req })
  }

  /** One call, tried again after a transport failure or a transient conflict (DEADLOCK). */
  private async post(params: Record<string, unknown>): Promise<Record<string, any>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.postOnce(params)
      } catch (error) {
        const transient =
          error instanceof InterfaceError &&
          RETRIED.has(error.code) &&
          attempt < RETRY_DELAYS_MS.length + 1
        if (!transient) throw error
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1]))
      }
    }
  }

  private async postOnce(params: Record<string, unknown>): Promise<Record<string, any>> {
    const req = String(params.req)
    let response: Response
    try {
      response = await fetch(`${this.baseUrl}/live/api.php`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: formOf({ version: VERSION, ...params }).toString(),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
    } catch (error) {
      throw new InterfaceError(req, 'TRANSPORT', (error as Error).message)
    }
    if (!response.ok) {
      await response.body?.cancel()
      throw new InterfaceError(req, 'TRANSPORT', `HTTP ${response.status}`)
    }
    const body = (await response.json().catch(() => null)) as Record<string, any> | null
    if (!body) throw new InterfaceError(req, 'TRANSPORT', 'the answer is not JSON')
    if (body.status !== 'ok') {
      throw new InterfaceError(req, String(body.errorCode ?? 'NOK'), String(body.errorMsg ?? ''))
    }
    return body
  }

  /**
   * The original bytes: by id in its book (session forms `oii` / `odi`), else by uuid or
   * internal name (`oin`, session-bound, any file the session may see).
   */
  async download(file: FileRef): Promise<Buffer | null> {
    const session = formOf({ ...this.credentials, version: VERSION }).toString()
    const book = `${encodeURIComponent(file.b_o)}/${encodeURIComponent(file.b_c)}`
    const paths: string[] = []
    if (file.id) paths.push(`${file.type === 'doc' ? 'odi' : 'oii'}/full/${book}/${file.id}`)
    for (const name of [file.uuid, file.internName]) {
      if (name) paths.push(`oin/full/${book}/${encodeURIComponent(name)}`)
    }
    for (const path of paths) {
      try {
        const response = await fetch(`${this.baseUrl}/live/dbi/${path}?${session}`, {
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        })
        if (response.ok) return Buffer.from(await response.arrayBuffer())
        await response.body?.cancel()
      } catch {}
    }
    return null
  }
}

/** The services act for an actor; a transfer run from the command line holds no session. */
export function localActor(user: User): Actor {
  return {
    user,
    principal: user,
    session: null as unknown as ApiSession,
    restrictions: { ...NO_RESTRICTIONS },
    onBehalf: false,
  }
}

/**
 * This server, in process, as one local user: each call runs the operation class api.php runs
 * (its validator, its restrictions, its handle), so every write goes through the same service
 * methods, stamps and events as a client's would. Nothing is written to plugin tables directly.
 */
export class LocalClient implements InterfaceClient {
  private registry: PluginRegistry | null = null

  constructor(readonly actor: Actor) {}

  get userCode() {
    return this.actor.user.code
  }

  /** One operation; a transient conflict (DEADLOCK, nothing written) is tried again. */
  async call(
    req: string,
    params: Record<string, unknown> = {},
    files: UploadedFile[] = []
  ): Promise<Record<string, any>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.callOnce(req, params, files)
      } catch (error) {
        const again = error instanceof InterfaceError && error.code === 'DEADLOCK'
        if (!again || attempt > RETRY_DELAYS_MS.length) throw error
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1]))
      }
    }
  }

  private async callOnce(
    req: string,
    params: Record<string, unknown>,
    files: UploadedFile[]
  ): Promise<Record<string, any>> {
    this.registry ??= await app.container.make(PluginRegistry)
    const claim = this.registry.operations.get(req)
    if (!claim) throw new InterfaceError(req, 'UNKNOWN_OPERATION', `Unknown operation: ${req}`)
    const { default: Operation } = await claim.load()
    const instance = await app.container.make(Operation)
    const wire: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined || value === null) continue
      wire[key] = typeof value === 'object' ? JSON.stringify(value) : String(value)
    }
    wire.req = req
    wire.o_u = this.actor.user.code
    wire.u_c = this.actor.user.code
    try {
      enforceRestrictions(
        { label: Operation.operation, writes: Operation.writes, area: Operation.area },
        this.actor,
        wire as any
      )
      const input = Operation.validator ? await validateWire(Operation.validator, wire) : wire
      // As a client reads the answer: parts written as JSON text (a page's cells) as values.
      return readJsonTexts(
        await instance.handle(input, {
          req,
          params: wire as any,
          files,
          actor: this.actor,
          ip: '127.0.0.1',
          logger,
        })
      )
    } catch (error) {
      const rpc = error instanceof RpcError ? error : toRpcError(error, logger, { req })
      throw new InterfaceError(req, rpc.code, rpc.message)
    }
  }

  /** fileUpload with the bytes as its `qqfile` part (a temp file, as the body parser writes). */
  async upload(params: Record<string, unknown>, bytes: Buffer, name: string, mimeType = '') {
    const dir = await mkdtemp(join(tmpdir(), 'quire-transfer-'))
    const tmpPath = join(dir, 'part')
    try {
      await writeFile(tmpPath, bytes)
      const file: UploadedFile = {
        field: 'qqfile',
        clientName: name,
        mimeType: mimeType || 'application/octet-stream',
        size: bytes.length,
        tmpPath,
      }
      return await this.call('fileUpload', params, [file])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  /**
   * A file of this server (the export's side), through the reader the file-storing plugin
   * provides (local_files.ts: the media plugin; without it no book has files).
   */
  async download(file: FileRef): Promise<Buffer | null> {
    for (const name of [file.uuid, file.internName]) {
      if (!name) continue
      const bytes = await localFiles.read(name)
      if (bytes) return bytes
    }
    return null
  }
}
