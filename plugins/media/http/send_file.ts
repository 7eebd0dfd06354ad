import { readFile, stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** What is served: its bytes (a stream, from an optional range), size and date. */
export interface Servable {
  size: number
  lastModified: Date
  mime: string
  /** inline (images, audio, video, PDF) or attachment, with the client's file name. */
  disposition: 'inline' | 'attachment'
  fileName: string
  cacheControl: string
  /** The whole file in memory, when it is held there (then `open` is not called). */
  bytes?: Buffer
  open(range?: { start: number; end: number }): Promise<Readable>
}

/**
 * Every /dbi and upload answer: a served file is a sandboxed document of no
 * origin that may load nothing and run no script (a PDF with JavaScript, an
 * HTML file, an SVG are inert even when opened on the console's origin). It
 * allows only what the browser's own viewers need to show the file itself:
 * the image or media element of an image, audio or video document (Chromium
 * loads them under img-src / media-src), the embedded viewer of a PDF
 * (object-src), and the inline style of those generated documents.
 */
export const MEDIA_CSP =
  "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; object-src 'self'; style-src 'unsafe-inline'"

/** Files shipped with the plugin (a few small icons), read once. */
const shipped = new Map<string, { bytes: Buffer; lastModified: Date }>()

/** A file shipped with the plugin (icons). */
export async function shippedFile(path: string, cacheControl: string): Promise<Servable> {
  let held = shipped.get(path)
  if (!held) {
    const [bytes, info] = await Promise.all([readFile(path), stat(path)])
    held = { bytes, lastModified: info.mtime }
    shipped.set(path, held)
  }
  return heldFile(held.bytes, held.lastModified, {
    mime: 'image/png',
    disposition: 'inline',
    fileName: path.replace(/^.*\//, ''),
    cacheControl,
  })
}

/** A file whose bytes are in memory. */
export function heldFile(
  bytes: Buffer,
  lastModified: Date,
  served: Pick<Servable, 'mime' | 'disposition' | 'fileName' | 'cacheControl'>
): Servable {
  return {
    ...served,
    size: bytes.length,
    lastModified,
    bytes,
    open: async (range) =>
      Readable.from([range ? bytes.subarray(range.start, range.end + 1) : bytes]),
  }
}

/** RFC 6266 / 5987: an ASCII fallback and the exact UTF-8 name. */
function contentDisposition(kind: string, name: string) {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_')
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

/**
 * One `bytes=a-b` range (suffix and open forms too), RFC 9110 14.1-14.2: null
 * when absent, not a single range, or invalid (the last position before the
 * first: the header is then ignored and the whole file answered);
 * 'unsatisfiable' (416) when valid but past the end, or an empty suffix.
 */
export function parseRange(header: string | undefined, size: number) {
  if (!header) return null
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!match) return null
  const [, first, last] = match
  if (first === '' && last === '') return null
  if (first !== '' && last !== '' && Number(last) < Number(first)) return null
  let start: number
  let end: number
  if (first === '') {
    start = Math.max(size - Number(last), 0)
    end = size - 1
  } else {
    start = Number(first)
    end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
  }
  if (start > end || start >= size) return 'unsatisfiable' as const
  return { start, end }
}

/** Seconds a client is asked to wait after a 503 (image derivatives busy). */
export const RETRY_AFTER_SECONDS = 2

/** A bare status: no body details, never a stack trace. 503 says when to retry. */
export function sendStatus(res: ServerResponse, status: 403 | 404 | 500 | 503) {
  if (res.headersSent) return res.destroy()
  res.writeHead(status, {
    'Content-Type': 'text/plain',
    'Content-Length': '0',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': MEDIA_CSP,
    ...(status === 503 ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {}),
  })
  res.end()
}

/**
 * Serves a file the way browsers need to play and seek audio and video:
 * ETag and Last-Modified with 304, single byte ranges (206, 416), HEAD,
 * Content-Type from the stored (sniffed) type, nosniff.
 */
export async function sendFile(req: IncomingMessage, res: ServerResponse, file: Servable) {
  const etag = `"${file.size.toString(16)}-${Math.floor(file.lastModified.getTime() / 1000).toString(16)}"`
  const headers: Record<string, string> = {
    'Content-Type': file.mime,
    'Content-Disposition': contentDisposition(file.disposition, file.fileName),
    'ETag': etag,
    'Last-Modified': file.lastModified.toUTCString(),
    'Cache-Control': file.cacheControl,
    'Accept-Ranges': 'bytes',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': MEDIA_CSP,
  }
  const ifNoneMatch = req.headers['if-none-match']
  const ifModifiedSince = req.headers['if-modified-since']
  const notModified = ifNoneMatch
    ? ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
    : ifModifiedSince
      ? Math.floor(file.lastModified.getTime() / 1000) <= Date.parse(ifModifiedSince) / 1000
      : false
  if (notModified) {
    delete headers['Content-Type']
    delete headers['Content-Disposition']
    res.writeHead(304, headers)
    res.end()
    return
  }
  let range = parseRange(req.headers.range, file.size)
  // If-Range: a range only applies to the version the client has.
  const ifRange = req.headers['if-range']
  if (range && ifRange && ifRange !== etag && ifRange !== headers['Last-Modified']) range = null
  if (range === 'unsatisfiable') {
    res.writeHead(416, {
      'Content-Range': `bytes */${file.size}`,
      'Content-Length': '0',
      'Content-Security-Policy': MEDIA_CSP,
    })
    res.end()
    return
  }
  if (range) {
    headers['Content-Range'] = `bytes ${range.start}-${range.end}/${file.size}`
    headers['Content-Length'] = String(range.end - range.start + 1)
    res.writeHead(206, headers)
  } else {
    headers['Content-Length'] = String(file.size)
    res.writeHead(200, headers)
  }
  if (req.method === 'HEAD' || file.size === 0) {
    res.end()
    return
  }
  if (file.bytes) {
    res.end(range ? file.bytes.subarray(range.start, range.end + 1) : file.bytes)
    return
  }
  const stream = await file.open(range ?? undefined)
  try {
    await pipeline(stream, res)
  } catch {
    // The client went away mid-file (seeking does this): nothing more to send.
    stream.destroy()
  }
}
