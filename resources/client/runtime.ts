/*
 * The typed client's transport (hand-written; generated.ts adds one method per
 * operation on top of it). Runs in Node >= 18 and in browsers: it needs only
 * fetch, FormData and Blob. docs/client.md.
 */

/** How parameters travel (docs/spec/client-facts.md, "Transport"); urlencoded is the default. */
export type Form = 'urlencoded' | 'query' | 'get' | 'json' | 'multipart'

/** Every answer of api.php: status, req and createdVNB, then the operation's fields. */
export interface Envelope {
  status: 'ok' | 'nok'
  req?: string
  createdVNB?: string
  errorCode?: string
  errorMsg?: string
  error?: string
  [field: string]: any
}

export interface OkAnswer extends Envelope {
  status: 'ok'
}

/** An HTTP answer as received (send()): the body parsed, or `{ unparsable: text }`. */
export interface RawAnswer {
  status: number
  contentType: string | null
  body: Record<string, any>
  text: string
}

/** A file to send as the `qqfile` part (fileUpload, setBookCover, setProfileImage). */
export interface UploadFile {
  data: Blob | ArrayBuffer | Uint8Array
  name: string
  type?: string
}

export interface Credentials {
  o_u: string
  /** The user acted for; o_u unless acting on behalf of someone who delegated to o_u. */
  u_c?: string
  sesskey?: string
  oauthkey?: string
  appkey?: string
}

export interface ClientOptions {
  /** The server's origin, e.g. `https://quire.example` (no path). */
  baseUrl: string
  /** The environment prefix: `/live` (default) or e.g. `/dev`. */
  prefix?: string
  /** Sent as `version` with every call (default '6.49q/6.49'); null sends none. */
  version?: string | null
  /** Transport retries (connection failures, 502/503/504); never on a nok. Default 2. */
  retries?: number
  /** First retry delay in ms, doubled each time (default 250). */
  retryDelayMs?: number
  /** Default form for calls (default urlencoded). */
  form?: Form
  /** Headers added to every HTTP request (e.g. a proxy's). */
  headers?: Record<string, string>
  /** Another fetch (tests, instrumentation). */
  fetch?: typeof fetch
  credentials?: Credentials | null
}

export interface CallOptions {
  form?: Form
  /** Another path than `<prefix>/api.php` (e.g. `/live/api.php/`). */
  path?: string
  headers?: Record<string, string>
  /** Overrides the client's retries for this call. */
  retries?: number
  signal?: AbortSignal
  /** false: send no credentials with this call (true by default for call()). */
  credentials?: boolean
}

/** A nok answer: its errorCode (docs/errors.md), errorMsg and the whole envelope. */
export class QuireError extends Error {
  readonly errorCode: string
  readonly errorMsg: string
  readonly req: string
  readonly answer: Envelope

  constructor(req: string, answer: Envelope) {
    super(`${req}: ${answer.errorCode ?? 'nok'}: ${answer.errorMsg ?? ''}`)
    this.name = 'QuireError'
    this.req = req
    this.answer = answer
    this.errorCode = String(answer.errorCode ?? 'UNKNOWN')
    this.errorMsg = String(answer.errorMsg ?? '')
  }
}

/** The request did not get an api.php answer: no connection, a non-2xx status or a body not JSON. */
export class TransportError extends Error {
  readonly status: number | null
  readonly text: string | null

  constructor(message: string, options: { status?: number; text?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'TransportError'
    this.status = options.status ?? null
    this.text = options.text ?? null
  }
}

/** What generated methods pass about their operation. */
export interface OperationMeta {
  auth: string
  writes: boolean
  files: boolean
}

/** PHP bracket form of nested values: {a: {b: 1}} -> [['a[b]', '1']]; null is sent empty. */
export function bracketPairs(params: Record<string, unknown>, prefix = ''): [string, string][] {
  const pairs: [string, string][] = []
  for (const [key, value] of Object.entries(params)) {
    const name = prefix ? `${prefix}[${key}]` : key
    if (value !== null && typeof value === 'object')
      pairs.push(...bracketPairs(value as Record<string, unknown>, name))
    else if (value !== undefined) pairs.push([name, String(value ?? '')])
  }
  return pairs
}

/** Why a fetch rejected, as a Node error code when it has one (ECONNREFUSED...). */
function causeCode(error: unknown): string | undefined {
  let current: any = error
  for (let depth = 0; current && depth < 4; depth++) {
    if (typeof current.code === 'string') return current.code
    current = current.cause
  }
  return undefined
}

const RETRIED_STATUSES = new Set([502, 503, 504])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function asBlob(file: UploadFile): Blob {
  if (file.data instanceof Blob) return file.data
  return new Blob([file.data as any], { type: file.type ?? 'application/octet-stream' })
}

/**
 * Sends api.php calls with the credentials it holds. Retries transport
 * failures only: a write is retried only when the server was not reached
 * (connection refused) or answered 503, so it never runs twice; a nok is an
 * answer, never retried.
 */
export class QuireTransport {
  readonly baseUrl: string
  readonly prefix: string
  readonly version: string | null
  protected options: ClientOptions
  protected held: Credentials | null

  constructor(options: ClientOptions) {
    this.options = options
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.prefix = options.prefix ?? '/live'
    this.version = options.version === undefined ? '6.49q/6.49' : options.version
    this.held = options.credentials ?? null
  }

  /** The keys held: o_u, u_c, sesskey (and oauthkey, appkey after login). */
  get credentials(): Credentials | null {
    return this.held ? { ...this.held } : null
  }

  /** The api.php URL. */
  get apiUrl(): string {
    return `${this.baseUrl}${this.prefix}/api.php`
  }

  /** Holds these keys for the next calls (o_u, sesskey, and u_c when acting on behalf or as real clients send it). */
  useSession(credentials: Credentials): this {
    this.held = { ...this.held, ...credentials }
    return this
  }

  /** The parameters a call carries for the held session. */
  protected sessionParams(): Record<string, string> {
    if (!this.held?.sesskey) return {}
    // u_c only when held: the server reads a missing u_c as o_u (client-facts.md, "Keys").
    const params: Record<string, string> = { o_u: this.held.o_u }
    if (this.held.u_c) params.u_c = this.held.u_c
    params.sesskey = this.held.sesskey
    return params
  }

  /**
   * One HTTP request to api.php with exactly these parameters, as the server
   * answered it (any status; the body parsed or `{ unparsable }`). Throws
   * TransportError only when no answer came (after the retries allowed).
   */
  async send(
    params: Record<string, unknown>,
    options: CallOptions & { writes?: boolean; file?: UploadFile } = {}
  ): Promise<RawAnswer> {
    const form = options.file ? 'multipart' : (options.form ?? this.options.form ?? 'urlencoded')
    const retries = options.retries ?? this.options.retries ?? 2
    const doFetch = this.options.fetch ?? fetch
    for (let attempt = 0; ; attempt++) {
      const { url, init } = this.request(params, form, options)
      let response: Response
      try {
        response = await doFetch(url, init)
      } catch (error) {
        if (options.signal?.aborted) throw error
        const refused = causeCode(error) === 'ECONNREFUSED'
        if (attempt < retries && (refused || !options.writes)) {
          await sleep((this.options.retryDelayMs ?? 250) * 2 ** attempt)
          continue
        }
        throw new TransportError(`${url}: ${(error as Error).message}`, { cause: error })
      }
      if (
        RETRIED_STATUSES.has(response.status) &&
        attempt < retries &&
        (response.status === 503 || !options.writes)
      ) {
        await response.body?.cancel()
        await sleep((this.options.retryDelayMs ?? 250) * 2 ** attempt)
        continue
      }
      const text = await response.text()
      let body: Record<string, any>
      try {
        body = JSON.parse(text)
      } catch {
        body = { unparsable: text }
      }
      return {
        status: response.status,
        contentType: response.headers.get('content-type'),
        body,
        text,
      }
    }
  }

  private request(
    params: Record<string, unknown>,
    form: Form,
    options: CallOptions & { file?: UploadFile }
  ): { url: string; init: RequestInit } {
    const pairs = bracketPairs(params)
    const search = new URLSearchParams(pairs).toString()
    let url = options.path ? `${this.baseUrl}${options.path}` : this.apiUrl
    const headers: Record<string, string> = { ...this.options.headers, ...options.headers }
    const init: RequestInit = { method: 'POST', headers, signal: options.signal }
    switch (form) {
      case 'get':
        init.method = 'GET'
        url += `?${search}`
        break
      case 'query':
        url += `?${search}`
        break
      case 'urlencoded':
        headers['Content-Type'] = 'application/x-www-form-urlencoded'
        init.body = search
        break
      case 'json':
        headers['Content-Type'] = 'application/json'
        init.body = JSON.stringify(params)
        break
      case 'multipart': {
        const data = new FormData()
        for (const [key, value] of pairs) data.append(key, value)
        if (options.file) data.append('qqfile', asBlob(options.file), options.file.name)
        init.body = data
        break
      }
    }
    return { url, init }
  }

  /**
   * Calls an operation by name with the held credentials (params override
   * them) and answers the envelope as it came, ok or nok. Throws
   * TransportError when there was no api.php answer (non-2xx, not JSON).
   */
  async call(
    req: string,
    params: Record<string, unknown> = {},
    options: CallOptions & { writes?: boolean; file?: UploadFile } = {}
  ): Promise<Envelope> {
    const base: Record<string, unknown> = { req }
    if (this.version !== null) base.version = this.version
    const credentials = options.credentials === false ? {} : this.sessionParams()
    const answer = await this.send({ ...base, ...credentials, ...params }, options)
    if (answer.status < 200 || answer.status > 299) {
      throw new TransportError(`${req}: HTTP ${answer.status}`, {
        status: answer.status,
        text: answer.text,
      })
    }
    if ('unparsable' in answer.body || typeof answer.body.status !== 'string') {
      throw new TransportError(`${req}: the answer is not an api.php envelope`, {
        status: answer.status,
        text: answer.text,
      })
    }
    return answer.body as Envelope
  }

  /** A generated method's call: the ok answer, or QuireError on a nok. */
  protected async invoke<T extends OkAnswer>(
    req: string,
    meta: OperationMeta,
    params: object,
    options: CallOptions = {},
    file?: UploadFile
  ): Promise<T> {
    const answer = await this.call(req, params as Record<string, unknown>, {
      ...options,
      credentials: options.credentials ?? meta.auth !== 'none',
      writes: meta.writes,
      file,
    })
    if (answer.status !== 'ok') throw new QuireError(req, answer)
    return answer as T
  }
}
