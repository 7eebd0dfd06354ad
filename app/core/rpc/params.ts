import qs from 'qs'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { pipeline } from 'node:stream/promises'
import type { IncomingMessage } from 'node:http'
import Busboy from 'busboy'
import { rpcError } from './errors.js'
import { MAX_NESTING, dropPrototypeKeys, exceedsNesting } from './nesting.js'

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
  /** Largest urlencoded or JSON body, in bytes. */
  maxFormBytes: number
  /** Largest single uploaded file, in bytes. */
  maxFileBytes: number
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

/** Brackets, raw or percent-encoded: only then is qs needed. */
const BRACKETS = /\[|%5b/i

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
  if (BRACKETS.test(text)) return qs.parse(text, QS_OPTIONS) as Params
  // Flat parameters (nearly every call) need none of qs's machinery; same rules:
  // empty names and prototype member names skipped, the last of a repeated name wins.
  const params: Params = {}
  let count = 0
  for (const part of text.split('&')) {
    if (part === '') continue
    if (++count > QS_OPTIONS.parameterLimit!) break
    const equals = part.indexOf('=')
    const name = decodeComponent(equals === -1 ? part : part.slice(0, equals))
    if (name === '' || name in Object.prototype) continue
    params[name] = equals === -1 ? '' : decodeComponent(part.slice(equals + 1))
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
    req.on('error', reject)
  })
}

async function readMultipart(req: IncomingMessage, limits: BodyLimits): Promise<ParsedRequest> {
  const uploadDir = join(tmpdir(), 'quire-uploads')
  await mkdir(uploadDir, { recursive: true })
  const fields: [string, string][] = []
  const files: UploadedFile[] = []
  const writes: Promise<void>[] = []

  const cleanup = async () => {
    await Promise.all(files.map((file) => rm(file.tmpPath, { force: true })))
  }

  try {
    await new Promise<void>((resolve, reject) => {
      let busboy: Busboy.Busboy
      try {
        busboy = Busboy({
          headers: req.headers,
          // File names as UTF-8 (browsers and fetch send them so); busboy's default is Latin-1.
          defParamCharset: 'utf8',
          limits: {
            fileSize: limits.maxFileBytes,
            fieldSize: limits.maxFormBytes,
            fields: 100_000,
          },
        })
      } catch (error) {
        reject(
          rpcError('INVALID_PARAMETER', `Malformed multipart body: ${(error as Error).message}`)
        )
        return
      }
      busboy.on('field', (name, value) => fields.push([name, value]))
      busboy.on('file', (field, stream, info) => {
        const upload: UploadedFile = {
          field,
          clientName: info.filename ?? '',
          mimeType: info.mimeType,
          size: 0,
          tmpPath: join(uploadDir, randomUUID()),
        }
        files.push(upload)
        stream.on('data', (chunk: Buffer) => (upload.size += chunk.length))
        stream.on('limit', () =>
          reject(
            rpcError(
              'PAYLOAD_TOO_LARGE',
              `File "${upload.clientName}" exceeds ${limits.maxFileBytes} bytes`
            )
          )
        )
        writes.push(pipeline(stream, createWriteStream(upload.tmpPath)))
      })
      busboy.on('error', (error) =>
        reject(
          rpcError('INVALID_PARAMETER', `Malformed multipart body: ${(error as Error).message}`)
        )
      )
      busboy.on('close', () => resolve())
      req.pipe(busboy)
    })
    await Promise.all(writes)
  } catch (error) {
    await cleanup()
    throw error
  }

  // Field names carry bracket notation too: decode them all at once, like a form body.
  const params = qs.parse(
    fields
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&'),
    QS_OPTIONS
  ) as Params
  return { params, files, cleanup }
}

const noCleanup = async () => {}

/** Reads the body of an api.php request into parameters, by content type. */
export async function parseBody(req: IncomingMessage, limits: BodyLimits): Promise<ParsedRequest> {
  const method = req.method ?? 'GET'
  if (method === 'GET' || method === 'HEAD') return { params: {}, files: [], cleanup: noCleanup }

  const contentType = (req.headers['content-type'] ?? '').toLowerCase()
  if (contentType.startsWith('multipart/form-data')) return readMultipart(req, limits)

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
    if (exceedsNesting(decoded))
      throw rpcError('INVALID_PARAMETER', `The JSON body nests deeper than ${MAX_NESTING} levels`)
    dropPrototypeKeys(decoded)
    return { params: stringifyLeaves(decoded), files: [], cleanup: noCleanup }
  }
  // urlencoded, and bodies sent without a content type (some clients omit it)
  return { params: decodeForm(text), files: [], cleanup: noCleanup }
}

/** Query string parameters of a request URL. */
export function parseQuery(url: string | undefined): Params {
  const index = url?.indexOf('?') ?? -1
  if (!url || index === -1) return {}
  return decodeForm(url.slice(index + 1))
}
