import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

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
 * The Node HTTP server of the application (bin/server.ts, and the test
 * server): the framework's handler, behind one path repair that must happen
 * before routing.
 */
export function createQuireServer(handler: (req: IncomingMessage, res: ServerResponse) => unknown) {
  return createServer((req, res) => {
    if (req.url) req.url = collapseSlashes(req.url)
    return handler(req, res)
  })
}
