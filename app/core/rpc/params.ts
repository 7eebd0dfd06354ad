import qs from 'qs'
import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { IncomingMessage } from 'node:http'
import Busboy from 'busboy'
import type { OperationFiles } from './base_operation.js'
import { rpcError } from './errors.js'
import { MAX_NESTING, acceptNested } from './nesting.js'
import { uploadPath } from './upload_temp.js'

/** The decoded parameters of one api.php request: PHP's $_REQUEST shape (string leaves). */
export type Params = Record<string, any>

export interface UploadedFile {
  field: string
  clientName: string
  mimeType: string
  size: number
  tmpPath: string
}

export interface ParsedRequest {
  params: Params
  files: UploadedFile[]
  /** Removes temporary upload files once the operation has finished. */
  cleanup(): Promise<void>
}

export interface BodyLimits {
  /** Largest urlencoded or JSON body (multipart: its fields, and each part no operation takes), in bytes. */
  maxFormBytes: number
  /**
   * Largest total of file parts written before any `req` names the operation; 0: no file part
   * is written then (an endpoint that takes no file).
   */
  maxFileBytes: number
  /** What the named operation takes (its `static files`), null for none; without it none takes files. */
  filesOf?: (req: string) => Promise<OperationFiles | null>
}

/** The parameter that names the operation: `req`, or `r` in some examples and clients. */
export function operationName(params: Params): string {
  const value = params.req ?? params.r
  return typeof value === 'string' ? value.trim() : ''
}

/**
 * PHP bracket notation without PHP's traps: `fieldValues[5]=x` stays the key
 * "5" (qs would otherwise compact it into an array), a repeated key keeps its
 * last value, and keys named like Object.prototype's members are dropped. The
 * objects made are ordinary ones: code that reads a client's value as text
 * (String(value)) then gets "[object Object]" and refuses it, where a
 * null-prototype object would make String() throw.
 */
const QS_OPTIONS: qs.IParseOptions = {
  parseArrays: false,
  depth: 12,
  parameterLimit: 100_000,
  duplicates: 'last',
  allowPrototypes: false,
  plainObjects: false,
  charset: 'utf-8',
}

/** Brackets percent-encoded (raw ones are looked for with includes): only then is qs needed. */
const ENCODED_BRACKET = /%5b/i

/** qs's decoding of one name or value: `+` is a space; undecodable text stays as sent. */
function decodeComponent(text: string) {
  const spaced = text.includes('+') ? text.replace(/\+/g, ' ') : text
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

export function decodeForm(text: string): Params {
  if (text.includes('[') || ENCODED_BRACKET.test(text)) return qs.parse(text, QS_OPTIONS) as Params
  // Flat parameters (nearly every call) need none of qs's machinery; same rules:
  // empty names and prototype member names skipped, the last of a repeated name wins.
  // One pass over the text (no array of parts made first): `nextEquals` is the first '=' at or
  // after the current part, looked for again only once the parts have passed it.
  const params: Params = {}
  let count = 0
  let nextEquals = -1
  for (let at = 0; at <= text.length;) {
    let end = text.indexOf('&', at)
    if (end === -1) end = text.length
    if (end > at) {
      if (++count > QS_OPTIONS.parameterLimit!) break
      if (nextEquals < at) {
        nextEquals = text.indexOf('=', at)
        if (nextEquals === -1) nextEquals = text.length
      }
      const equals = nextEquals < end ? nextEquals : -1
      const name = decodeComponent(text.slice(at, equals === -1 ? end : equals))
      if (name !== '' && !(name in Object.prototype))
        params[name] = equals === -1 ? '' : decodeComponent(text.slice(equals + 1, end))
    }
    at = end + 1
  }
  return params
}

/** Every scalar leaf becomes a string, as PHP would see it; objects and arrays are kept. */
export function stringifyLeaves(value: unknown): any {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (Array.isArray(value)) return value.map(stringifyLeaves)
  if (typeof value === 'object') {
    const out: Params = {}
    for (const [key, inner] of Object.entries(value)) out[key] = stringifyLeaves(inner)
    return out
  }
  return String(value)
}

const isPlainObject = (value: unknown): value is Params =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Body values win over query values (PHP's request order "GP"); nested objects merge key by key. */
export function mergeParams(base: Params, override: Params): Params {
  const out: Params = { ...base }
  for (const [key, value] of Object.entries(override)) {
    out[key] =
      isPlainObject(out[key]) && isPlainObject(value) ? mergeParams(out[key], value) : value
  }
  return out
}

/**
 * Rejects once the request ends without its whole body (the client went away, or Node's
 * requestTimeout cut it): a reader waiting for 'end' would otherwise wait forever.
 */
function onCut(req: IncomingMessage, fail: (error: unknown) => void) {
  const cut = () => fail(rpcError('INVALID_PARAMETER', 'The request ended before its body did'))
  req.on('close', () => {
    if (!req.complete) cut()
  })
  req.on('error', cut)
  // Served a moment after it arrived (node_server.ts serves api.php in batches): it may be over.
  if (req.destroyed && !req.complete) cut()
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        reject(rpcError('PAYLOAD_TOO_LARGE', `Request body exceeds ${limit} bytes`))
        req.resume()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    onCut(req, reject)
  })
}

const malformed = (error: unknown) =>
  rpcError('INVALID_PARAMETER', `Malformed multipart body: ${(error as Error).message}`)

/** File parts one request may carry (each makes a temp file, even an empty one). */
const MAX_FILE_PARTS = 100

/**
 * A multipart body. Each file part goes to a temp file only when the operation known when the
 * part begins (query string, or a `req`/`r` field before it) takes files (`static files`), within
 * that operation's byte budget for the whole request; a part before any `req` is bounded by
 * `limits.maxFileBytes`, and checked against the operation once the body is read. Every temp file
 * is gone when this rejects, and after `cleanup()` otherwise. No promise is left unobserved: a
 * truncated body or a vanished client fails this request and nothing else.
 */
async function readMultipart(
  req: IncomingMessage,
  limits: BodyLimits,
  query: Params
): Promise<ParsedRequest> {
  const fields: [string, string][] = []
  /** `req` and `r` as read so far from the body: they name the operation, over the query's. */
  const named: Params = {}
  let files: UploadedFile[] = []
  /** Every temp file made, kept or not: all are removed on failure. */
  const paths: string[] = []
  /** One per file part; each settles (never rejects) once its temp file is closed. */
  const parts: Promise<void>[] = []
  const open = new Set<{ destroy(): unknown }>()
  const decided = new Map<string, Promise<OperationFiles | null>>()
  let failure: unknown = null
  let spent = 0
  let discarded = 0
  let fieldBytes = 0

  /** What an operation named `name` takes; '' (none named yet) is the body parser's own bound. */
  const policyFor = (name: string, before = true): Promise<OperationFiles | null> => {
    if (name === '')
      return Promise.resolve(
        before && limits.maxFileBytes > 0 ? { maxBytes: limits.maxFileBytes } : null
      )
    let policy = decided.get(name)
    if (!policy) {
      policy = limits.filesOf ? limits.filesOf(name).catch(() => null) : Promise.resolve(null)
      decided.set(name, policy)
    }
    return policy
  }
  const removeAll = () => Promise.all(paths.map((path) => rm(path, { force: true })))

  let busboy: Busboy.Busboy
  try {
    busboy = Busboy({
      headers: req.headers,
      // File names as UTF-8 (browsers and fetch send them so); busboy's default is Latin-1.
      defParamCharset: 'utf8',
      limits: { fieldSize: limits.maxFormBytes, fields: 100_000, files: MAX_FILE_PARTS },
    })
  } catch (error) {
    req.resume()
    throw malformed(error)
  }

  await new Promise<void>((resolve) => {
    const fail = (error: unknown) => {
      if (failure === null) failure = error
      for (const stream of open) stream.destroy()
      req.unpipe(busboy)
      busboy.destroy()
      // The rest of the body is read and dropped, so that the answer reaches the client.
      req.resume()
      resolve()
    }
    const tooLarge = (message: string) => fail(rpcError('PAYLOAD_TOO_LARGE', message))

    busboy.on('field', (name, value, info) => {
      fieldBytes += name.length + value.length
      if (info.valueTruncated || fieldBytes > limits.maxFormBytes)
        return tooLarge(`The form fields exceed ${limits.maxFormBytes} bytes`)
      if (name === 'req' || name === 'r') named[name] = value
      fields.push([name, value])
    })
    busboy.on('file', (field, stream, info) => {
      // A truncated body errors the part too: busboy's own 'error' reports it once, below.
      stream.on('error', () => {})
      open.add(stream)
      const discard = () => {
        stream.on('data', (chunk: Buffer) => {
          discarded += chunk.length
          if (discarded > limits.maxFormBytes)
            tooLarge(`A file part the operation does not take exceeds ${limits.maxFormBytes} bytes`)
        })
        stream.resume()
      }
      if (failure !== null) return discard()
      const deciding = policyFor(operationName(mergeParams(query, named)))
      parts.push(
        deciding
          .then(async (policy) => {
            const tmpPath = policy ? await uploadPath() : ''
            // Decided after the request failed, or for an operation that takes no file: no disk.
            if (failure !== null || !policy) return discard()
            const upload: UploadedFile = {
              field,
              clientName: info.filename ?? '',
              mimeType: info.mimeType,
              size: 0,
              tmpPath,
            }
            paths.push(upload.tmpPath)
            files.push(upload)
            const meter = new Transform({
              transform(chunk: Buffer, _encoding, done) {
                upload.size += chunk.length
                spent += chunk.length
                if (spent > policy.maxBytes)
                  return done(
                    rpcError('PAYLOAD_TOO_LARGE', `The files exceed ${policy.maxBytes} bytes`)
                  )
                done(null, chunk)
              },
            })
            await pipeline(stream, meter, createWriteStream(upload.tmpPath))
          })
          .catch(fail)
          .finally(() => open.delete(stream))
      )
    })
    busboy.on('filesLimit', () => tooLarge(`More than ${MAX_FILE_PARTS} file parts`))
    busboy.on('error', (error) => fail(malformed(error)))
    busboy.on('close', () => resolve())
    onCut(req, fail)
    req.pipe(busboy)
  })
  // Every temp file is closed past this point: nothing is written to it after its removal.
  await Promise.all(parts)
  if (failure !== null) {
    await removeAll()
    throw failure
  }

  // Field names carry bracket notation too: decode them all at once, like a form body.
  const params = qs.parse(
    fields
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&'),
    QS_OPTIONS
  ) as Params
  if (files.length > 0) {
    // Parts that came before `req` was known: now checked against the operation itself.
    const policy = await policyFor(operationName(mergeParams(query, params)), false)
    const total = files.reduce((sum, file) => sum + file.size, 0)
    if (!policy || total > policy.maxBytes) {
      await removeAll()
      files = []
      if (policy) throw rpcError('PAYLOAD_TOO_LARGE', `The files exceed ${policy.maxBytes} bytes`)
    }
  }
  return {
    params,
    files,
    cleanup: paths.length > 0 ? async () => void (await removeAll()) : noCleanup,
  }
}

/** The cleanup of a request that made no temp file. */
const noCleanup = async () => {}

/** Whether `cleanup()` has temp files to remove (a multipart body that made some). */
export function holdsTempFiles(parsed: ParsedRequest): boolean {
  return parsed.cleanup !== noCleanup
}

/** GET and HEAD: parseBody reads no body for them (their parameters are in the query string). */
export function readsNoBody(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET'
  return method === 'GET' || method === 'HEAD'
}

/**
 * Reads the body of an api.php request into parameters, by content type. `query`: the request's
 * query string parameters, which may name the operation before a multipart body's file parts.
 */
export async function parseBody(
  req: IncomingMessage,
  limits: BodyLimits,
  query: Params = {}
): Promise<ParsedRequest> {
  if (readsNoBody(req)) return { params: {}, files: [], cleanup: noCleanup }

  const contentType = (req.headers['content-type'] ?? '').toLowerCase()
  if (contentType.startsWith('multipart/form-data')) return readMultipart(req, limits, query)

  const text = await readBody(req, limits.maxFormBytes)
  if (text.trim() === '') return { params: {}, files: [], cleanup: noCleanup }

  if (contentType.includes('json')) {
    let decoded: unknown
    try {
      decoded = JSON.parse(text)
    } catch {
      throw rpcError('INVALID_PARAMETER', 'The JSON body could not be parsed')
    }
    if (!isPlainObject(decoded))
      throw rpcError('INVALID_PARAMETER', 'The JSON body must be an object')
    if (!acceptNested(decoded))
      throw rpcError('INVALID_PARAMETER', `The JSON body nests deeper than ${MAX_NESTING} levels`)
    return { params: stringifyLeaves(decoded), files: [], cleanup: noCleanup }
  }
  // urlencoded, and bodies sent without a content type (some clients omit it)
  return { params: decodeForm(text), files: [], cleanup: noCleanup }
}

/**
 * Query strings decoded lately, by their text: a client that polls sends the same URL again and
 * again (getUserInfo, or getMsgs with the same sstamp, until something changes), and decoding one
 * cost about as much as the rest of api.php's own work on a getUserInfo. Only flat results (every
 * value a string, no bracket notation) are kept, of texts up to QUERY_TEXT_MAX characters; each
 * call gets its own copy. Emptied when full.
 */
const QUERY_TEXTS = 1000
const QUERY_TEXT_MAX = 1024
const decodedQueries = new Map<string, Readonly<Params>>()

const isFlat = (params: Params) => {
  for (const key in params) if (typeof params[key] !== 'string') return false
  return true
}

/** Query string parameters of a request URL (a new object each call: callers may change it). */
export function parseQuery(url: string | undefined): Params {
  const index = url?.indexOf('?') ?? -1
  if (!url || index === -1) return {}
  const text = url.slice(index + 1)
  if (text.length > QUERY_TEXT_MAX) return decodeForm(text)
  const known = decodedQueries.get(text)
  if (known !== undefined) return { ...known }
  const params = decodeForm(text)
  if (isFlat(params)) {
    if (decodedQueries.size >= QUERY_TEXTS) decodedQueries.clear()
    decodedQueries.set(text, Object.freeze({ ...params }))
  }
  return params
}
