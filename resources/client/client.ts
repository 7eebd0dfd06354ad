import { QuireOperations } from './generated.js'
import { TransportError, type ClientOptions, type Credentials } from './runtime.js'
import { QuireSocket, type SocketOptions } from './socket.js'

/** Where a resumable upload goes: a message (smid, or uuid with b_o/b_c) or a file cell. */
export interface TusTarget {
  b_o?: string
  b_c?: string
  smid?: number
  uuid?: string
  rowId?: number | string
  fieldId?: number
}

/** A resumable upload's source: a Blob/File in browsers; a Buffer or a Readable in Node. */
export type TusSource = Blob | Uint8Array | ReadableLike

/** A Node Readable, described without Node's types (the client also builds for browsers). */
export interface ReadableLike {
  pipe(destination: any): any
  on(event: string, listener: (...args: any[]) => void): any
}

export interface TusOptions {
  filename?: string
  filetype?: string
  /** Bytes per PATCH (default 5 MiB; a Readable needs one). */
  chunkSize?: number
  /** Delays between retries of a failed request (tus-js-client; default 0.5, 1, 3 s). */
  retryDelays?: number[]
  onProgress?: (sent: number, total: number) => void
  /** Resume this upload URL (from an earlier run) instead of creating one. */
  uploadUrl?: string
  /** Called with the upload URL once known, to store it for resuming. */
  onUploadUrl?: (url: string) => void
}

/** The 2.11 metadata of a finished resumable upload (upload_meta). */
export interface TusResult {
  uploadUrl: string
  status: string
  smid?: number
  rowId?: number
  fieldId?: number
  uuid?: string
  [field: string]: unknown
}

/**
 * The Quire client: one typed method per operation (generated.ts), the key
 * flow, the socket and uploads. docs/client.md.
 *
 * ```ts
 * const quire = new QuireClient({ baseUrl: 'https://quire.example' })
 * await quire.login({ appname: 'my app', login: 'ada@example.com', password: '...' })
 * const { books } = await quire.getAllBooks()
 * ```
 */
export class QuireClient extends QuireOperations {
  constructor(options: ClientOptions) {
    super(options)
  }

  /**
   * The key flow: createAppkey (unless `appkey` is given), createOauthkey,
   * createSesskey. Holds o_u (the user's code, even when the login was an
   * e-mail), u_c, sesskey, oauthkey and appkey for the next calls.
   */
  async login(input: {
    login: string
    password: string
    appname?: string
    appkey?: string
    restrictions?: unknown
  }): Promise<Credentials> {
    const appkey =
      input.appkey ?? (await this.createAppkey({ appname: input.appname ?? 'quire-client' })).appkey
    const oauth = await this.createOauthkey({ appkey, login: input.login, pwd: input.password })
    this.held = { o_u: String(oauth.o_u), oauthkey: String(oauth.oauthkey), appkey }
    return this.openSession({ restrictions: input.restrictions })
  }

  /** Holds a user's oauthkey (kept from an earlier login); then openSession(). */
  useOauthkey(keys: { o_u: string; oauthkey: string }): this {
    this.held = { o_u: keys.o_u, oauthkey: keys.oauthkey }
    return this
  }

  /**
   * A new sesskey from the held oauthkey (createSesskey): after login or
   * useOauthkey, or when the session expired (SESSION_EXPIRED).
   * `restrictions` (JSON text or an object) may make it read-only or keep it to one book.
   */
  async openSession(options: { restrictions?: unknown } = {}): Promise<Credentials> {
    if (!this.held?.oauthkey) throw new Error('openSession needs an oauthkey: login() first')
    const session = await this.createSesskey({
      o_u: this.held.o_u,
      oauthkey: this.held.oauthkey,
      // JSON text or an object (sent in PHP bracket form): the server reads both.
      restrictions: options.restrictions ?? '',
    })
    this.held = { ...this.held, u_c: this.held.u_c ?? this.held.o_u, sesskey: session.sesskey }
    return this.credentials!
  }

  /** The `<prefix>/socket` URL on the client's origin. */
  get socketUrl(): string {
    return `${this.baseUrl.replace(/^http/, 'ws')}${this.prefix}/socket`
  }

  /**
   * A socket for the held session, connected and attached (its first type 8
   * arrived). It reconnects after a drop, and always uses the keys held now.
   */
  async socket(options: Partial<Omit<SocketOptions, 'credentials'>> = {}): Promise<QuireSocket> {
    const socket = new QuireSocket({
      url: this.socketUrl,
      version: this.version,
      ...options,
      credentials: () => this.credentials,
    })
    return socket.connect()
  }

  /**
   * A resumable upload through the tus endpoint (`<prefix>/upload`, tus 1.0
   * with tus-js-client): the file is attached as fileUpload would attach it.
   * Resolves with its upload_meta (smid, rowId, fieldId, uuid, status...).
   */
  async tusUpload(source: TusSource, target: TusTarget, options: TusOptions = {}) {
    const keys = this.credentials
    if (!keys?.sesskey) throw new Error('tusUpload needs a session: login() first')
    const { Upload } = await import('tus-js-client')
    const metadata: Record<string, string> = {
      o_u: keys.o_u,
      u_c: keys.u_c ?? keys.o_u,
      sesskey: keys.sesskey,
    }
    if (this.version) metadata.version = this.version
    for (const [name, value] of Object.entries(target)) {
      if (value !== undefined && value !== null) metadata[name] = String(value)
    }
    if (options.filename) metadata.filename = options.filename
    if (options.filetype) metadata.filetype = options.filetype
    // tus-js-client's Node reader takes a Buffer (not any Uint8Array) or a Readable.
    const NodeBuffer = (globalThis as any).Buffer
    const input =
      NodeBuffer && source instanceof Uint8Array && !NodeBuffer.isBuffer(source)
        ? NodeBuffer.from(source.buffer, source.byteOffset, source.byteLength)
        : source
    const uploadUrl = await new Promise<string>((resolve, reject) => {
      const upload = new Upload(input as any, {
        endpoint: `${this.baseUrl}${this.prefix}/upload`,
        uploadUrl: options.uploadUrl ?? null,
        metadata,
        chunkSize: options.chunkSize ?? 5 * 1024 * 1024,
        retryDelays: options.retryDelays ?? [500, 1000, 3000],
        // The server keeps the upload on disk; the URL is the caller's to keep (onUploadUrl).
        storeFingerprintForResuming: false,
        onProgress: options.onProgress,
        onUploadUrlAvailable: () => {
          if (upload.url) options.onUploadUrl?.(upload.url)
        },
        onSuccess: () => resolve(upload.url!),
        onError: (error) => reject(error),
      })
      upload.start()
    })
    const fileId = uploadUrl.split('/').pop()!
    const query = new URLSearchParams({ o_u: keys.o_u, sesskey: keys.sesskey }).toString()
    const metaUrl = `${this.baseUrl}${this.prefix}/upload/upload_meta/${fileId}?${query}`
    const response = await (this.options.fetch ?? fetch)(metaUrl)
    if (!response.ok) {
      throw new TransportError(`upload_meta: HTTP ${response.status}`, {
        status: response.status,
        text: await response.text(),
      })
    }
    const meta = (await response.json()) as Record<string, unknown>
    return { ...meta, uploadUrl } as TusResult
  }
}
