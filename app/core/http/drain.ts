import type { Server } from 'node:http'

/** How often idle keep-alive connections are closed while draining. */
const SWEEP_MS = 100

/**
 * Closes an HTTP server for a graceful shutdown: it stops accepting
 * connections at once, requests already being handled run to their end, and
 * each keep-alive connection is closed as soon as it is idle. What is still
 * open after `graceMs` is cut. Answers whether everything ended by itself.
 *
 * Long-lived exchanges (WebSocket connections, SSE streams) never end by
 * themselves: their owners close them first (SocketProvider's terminating hook).
 */
export function drainHttpServer(server: Server, graceMs: number): Promise<'drained' | 'forced'> {
  return new Promise((resolve) => {
    let done = false
    const finish = (how: 'drained' | 'forced') => {
      if (done) return
      done = true
      clearInterval(sweep)
      clearTimeout(force)
      resolve(how)
    }
    // The callback runs once every connection has ended (at once, with an error, if not listening).
    server.close(() => finish('drained'))
    server.closeIdleConnections()
    // A request finishing on a keep-alive connection leaves it idle, not closed.
    const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS)
    const force = setTimeout(() => {
      server.closeAllConnections()
      finish('forced')
    }, graceMs)
  })
}
