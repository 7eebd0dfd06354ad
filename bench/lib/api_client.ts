import { Agent, request } from 'node:http'

/** An api.php call that answered `nok` (or not JSON). */
export class ApiError extends Error {}

/**
 * api.php over keep-alive HTTP as a client sends it: POST, form-encoded, the session's
 * parameters added to each call; objects are sent as JSON. node:http rather than fetch: the
 * client shares the machine with the server, and fetch costs it several times more CPU per call.
 */
export function apiClient(
  url: string,
  session: { o_u: string; sesskey: string },
  connections = 16
) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const endpoint = new URL('/live/api.php', url)
  const base = {
    version: '6.49q/6.49',
    o_u: session.o_u,
    u_c: session.o_u,
    sesskey: session.sesskey,
  }
  const call = (req: string, params: Record<string, unknown> = {}): Promise<any> => {
    const form = new URLSearchParams({ req, ...base })
    for (const [key, value] of Object.entries(params))
      if (value !== undefined)
        form.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value))
    return send(req, form.toString())
  }
  const send = (req: string, body: string, retried = false): Promise<any> =>
    new Promise((resolve, reject) => {
      const outgoing = request(
        endpoint,
        {
          agent,
          method: 'POST',
          headers: {
            'Content-Type': 'application/x-www-form-urlencoded',
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (response) => {
          const parts: Buffer[] = []
          response.on('data', (part) => parts.push(part))
          response.on('end', () => {
            const text = Buffer.concat(parts).toString()
            let answer: any
            try {
              answer = JSON.parse(text)
            } catch {
              return reject(
                new ApiError(`${req}: HTTP ${response.statusCode} ${text.slice(0, 200)}`)
              )
            }
            if (answer.status !== 'ok')
              return reject(new ApiError(`${req}: ${JSON.stringify(answer).slice(0, 300)}`))
            resolve(answer)
          })
          response.on('error', reject)
        }
      )
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed while this process was busy (seeding runs
        // synchronous SQLite work, so the close was not seen yet): the request never reached
        // the server; sent again once on a new socket.
        const stale = error.code === 'ECONNRESET' || error.code === 'EPIPE'
        if (stale && outgoing.reusedSocket && !retried) send(req, body, true).then(resolve, reject)
        else reject(error)
      })
      outgoing.end(body)
    })
  return { call, close: () => agent.destroy() }
}
