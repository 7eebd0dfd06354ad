import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'

/**
 * The request path with runs of slashes collapsed: real clients build URLs by
 * concatenation (`$url . '/dev/' . '/api.php'`, media URLs as `//dev/dbi/...`),
 * and the router would not match them. The query string is left untouched.
 */
export function collapseSlashes(url: string): string {
  const queryAt = url.indexOf('?')
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  if (!path.includes('//')) return url
  return path.replace(/\/{2,}/g, '/') + (queryAt === -1 ? '' : url.slice(queryAt))
}

/**
 * The largest request line and headers read (Node's default is 16 KB). Clients
 * that put every parameter in the query string (plain GET) may send long
 * values: they get the operation's own answer up to this size.
 */
const MAX_HEADER_BYTES = 256 * 1024

/**
 * Beyond MAX_HEADER_BYTES Node refuses the request with a bare 431 before any
 * handler runs: the client gets the api.php answer for a request too large
 * instead, and is told to send the parameters in the body.
 */
const HEADERS_TOO_LARGE = JSON.stringify({
  status: 'nok',
  req: '',
  errorCode: 'PAYLOAD_TOO_LARGE',
  errorMsg: `The URL and headers exceed ${MAX_HEADER_BYTES / 1024} KB: send the parameters in the request body`,
  error: `apiProcess50: The URL and headers exceed ${MAX_HEADER_BYTES / 1024} KB`,
})

/** How long the rest of a refused request is read and discarded before the connection closes. */
const LINGER_MS = 2000

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex) {
  if (!socket.writable) return socket.destroy()
  const answer =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n' +
        `Content-Length: ${Buffer.byteLength(HEADERS_TOO_LARGE)}\r\n\r\n${HEADERS_TOO_LARGE}`
      : // Node's own answers otherwise: 408 for a request too slow to arrive, 400 for a malformed one.
        `HTTP/1.1 ${error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request'}` +
        '\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'
  // The client may still be sending the request: read and drop the rest for a moment, so that
  // closing does not reset the connection (a reset can destroy the answer before it is read).
  socket.on('data', () => {})
  socket.resume()
  socket.end(answer)
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
}

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown

/** The methods the router's api.php route takes (router.any): any other goes to the router. */
const API_METHODS = new Set(['HEAD', 'OPTIONS', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'])

/** api.php ahead of the router (ApiController registers it): the paths it serves, and how. */
let apiAhead: { paths: Set<string>; handle: NodeHandler } | null = null
let apiAheadOn = true

/**
 * Serves `paths` (each as written and with a trailing slash, as the router matches them) with
 * `handle`, ahead of the framework's handler: a small api.php call then costs no HttpContext,
 * router lookup or middleware runner (README, "The per-request path"). Only exact paths are
 * taken; any other spelling the router might accept still reaches it.
 */
export function serveApiAhead(paths: string[], handle: NodeHandler) {
  apiAhead = { paths: new Set(paths.flatMap((path) => [path, `${path}/`])), handle }
}

/** Turns the path ahead of the router on or off (tests compare both); answers the previous state. */
export function useApiAhead(on: boolean): boolean {
  const before = apiAheadOn
  apiAheadOn = on
  return before
}

/**
 * api.php requests read in the current I/O phase of the event loop, served together in one
 * callback (setImmediate runs right after that phase): readCached (app/core/native_sql.ts) then
 * reads SQLite's data_version once for all of them instead of once per request. Each request
 * arrived before the callback began, so a result checked in it is no older than its arrival.
 */
let batch: [NodeHandler, IncomingMessage, ServerResponse][] = []

function serveBatch() {
  const served = batch
  batch = []
  for (const [handle, req, res] of served) {
    // A handler that threw at once must not leave the rest of the batch unanswered.
    try {
      handle(req, res)
    } catch (error) {
      res.destroy(error as Error)
    }
  }
}

function takesApi(req: IncomingMessage, url: string): boolean {
  if (apiAhead === null || !apiAheadOn || !API_METHODS.has(req.method ?? '')) return false
  const queryAt = url.indexOf('?')
  return apiAhead.paths.has(queryAt === -1 ? url : url.slice(0, queryAt))
}

/**
 * The Node HTTP server of the application (bin/server.ts, and the test
 * server): the framework's handler, behind one path repair that must happen
 * before routing, and api.php served ahead of it (serveApiAhead).
 */
export function createQuireServer(handler: NodeHandler) {
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    if (req.url) {
      const url = collapseSlashes(req.url)
      req.url = url
      if (takesApi(req, url)) {
        if (batch.push([apiAhead!.handle, req, res]) === 1) setImmediate(serveBatch)
        return
      }
    }
    return handler(req, res)
  })
  server.on('clientError', answerClientError)
  return server
}
