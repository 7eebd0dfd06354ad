import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

export interface Received {
  id: string
  timestamp: number
  signatures: string[]
  body: any
  raw: string
  /** What the receiver answered ('hang': nothing). */
  status: number | 'hang'
}

/**
 * A webhook receiver on 127.0.0.1 (never any other address) that checks
 * every request with the `standardwebhooks` reference library, unchanged,
 * against the secrets it was given: a request no secret verifies (or with a
 * timestamp older than the library's 5-minute tolerance) is answered 400 and
 * counted in `rejected`. `answer` decides the status of each verified request
 * ('hang' keeps it open until the receiver closes).
 */
export async function startReceiver() {
  const received: Received[] = []
  const rejected: string[] = []
  const hanging = new Set<http.ServerResponse>()
  const state = {
    secrets: [] as string[],
    answer: (_body: any, _count: number): number | 'hang' => 200,
  }
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const headers = {
        'webhook-id': String(request.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
      }
      let body: any = null
      for (const secret of state.secrets) {
        try {
          body = new Webhook(secret).verify(raw, headers)
          break
        } catch {}
      }
      if (body === null) {
        rejected.push(raw)
        response.writeHead(400).end('bad signature')
        return
      }
      const entry = {
        id: headers['webhook-id'],
        timestamp: Number(headers['webhook-timestamp']),
        signatures: headers['webhook-signature'].split(' '),
        body,
        raw,
      }
      const status = state.answer(body, received.filter((r) => r.id === entry.id).length + 1)
      received.push({ ...entry, status })
      if (status === 'hang') {
        hanging.add(response)
        return
      }
      response.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    rejected,
    state,
    /** Forgets what was received and rejected, and answers 200 again (between tests). */
    reset() {
      received.length = 0
      rejected.length = 0
      state.answer = () => 200
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>
