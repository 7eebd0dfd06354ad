import { request as httpRequest, type ClientRequest } from 'node:http'
import { readdir } from 'node:fs/promises'
import { watch, type FSWatcher } from 'node:fs'
import { waitFor } from './queue.js'

/**
 * Multipart bodies byte by byte, for what fetch and FormData never send: a body cut short, a
 * client that goes away in the middle of a file part. Loopback only.
 */

export const BOUNDARY = 'b'

export type Part =
  { name: string; value: string } | { name: string; filename: string; bytes: Buffer | string }

/** Parts in order, each opened by the boundary; `close` adds the closing boundary. */
export function multipartBody(parts: Part[], close = true): Buffer {
  const chunks: Buffer[] = []
  for (const part of parts) {
    const disposition =
      'filename' in part
        ? `form-data; name="${part.name}"; filename="${part.filename}"`
        : `form-data; name="${part.name}"`
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`))
    chunks.push(Buffer.from('filename' in part ? part.bytes : part.value))
    chunks.push(Buffer.from('\r\n'))
  }
  if (close) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  else if (chunks.length > 0) chunks.pop() // the part's own CRLF belongs to a boundary never sent
  return Buffer.concat(chunks)
}

/** The body (it says 73 bytes; its text is 77): one file part, no closing boundary. */
export const TRUNCATED_FILE_BODY = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="qqfile"; filename="a.txt"\r\n\r\nhello`
)

export interface RawAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

function open(base: string, path: string, length: number, contentType: string): ClientRequest {
  const { hostname, port } = new URL(base)
  return httpRequest({
    host: hostname,
    port,
    method: 'POST',
    path,
    agent: false,
    headers: { 'Content-Type': contentType, 'Content-Length': String(length) },
  })
}

function answerOf(req: ClientRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    req.on('error', reject)
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        })
      )
      res.on('error', reject)
    })
  })
}

/** POSTs `body` with its exact Content-Length (complete as HTTP, whatever it is as multipart). */
export function postRaw(
  base: string,
  path: string,
  body: Buffer,
  contentType = `multipart/form-data; boundary=${BOUNDARY}`
): Promise<RawAnswer> {
  const req = open(base, path, body.length, contentType)
  const answer = answerOf(req)
  req.end(body)
  return answer
}

/**
 * Announces `declared` bytes, sends `head` only, waits for `ready` (the server has begun with the
 * part), then destroys the socket: a client gone in the middle of a file part.
 */
export async function cutAfter(
  base: string,
  path: string,
  head: Buffer,
  declared: number,
  ready: () => Promise<unknown>
) {
  const req = open(base, path, declared, `multipart/form-data; boundary=${BOUNDARY}`)
  const settled = answerOf(req).catch(() => null)
  await new Promise((resolve) => req.write(head, resolve))
  try {
    await ready()
  } finally {
    req.destroy()
    await settled
  }
}

/**
 * The temp upload files of one server in a folder: `mine` picks them (a pid prefix in a shared
 * folder; in a folder of its own, every name but the ones a test planted).
 */
export function tempFiles(dir: string, mine: (name: string) => boolean) {
  const list = async () => {
    const names = await readdir(dir).catch(() => [] as string[])
    return names.filter(mine)
  }
  const count = async () => {
    const names = await list()
    return names.length
  }
  return {
    list,
    /** Waits until none is left. */
    untilNone: (what: string) =>
      waitFor(async () => (await count()) === 0, 10_000, `no temp file left (${what})`),
    /** Waits until one exists (a part reached the disk). */
    untilSome: (what: string) =>
      waitFor(async () => (await count()) > 0, 10_000, `a temp file (${what})`),
    /** Records every name that appears while it runs. */
    watch() {
      const seen = new Set<string>()
      const watcher: FSWatcher = watch(dir, (_event, name) => {
        if (name && mine(name)) seen.add(name)
      })
      return { seen, close: () => watcher.close() }
    },
  }
}
