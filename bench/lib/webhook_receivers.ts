/**
 * bench:webhooks' receivers, in a process of their own (forked by bench/webhooks.ts): a receiver
 * is another machine in production, so it must not share the load generator's event loop (a
 * receipt waiting behind the writers' clients would count as delivery latency, and the
 * signature checks would slow the writers). At the default priority.
 *
 *   fast: verifies each request's Standard Webhooks signature and answers 204 at once;
 *   hang: reads the request and never answers (the server's attempt ends at its timeout).
 *
 * Over the IPC channel: the parent sends `{ secret: { id, secret } }` for each subscription and
 * `{ close: true }` at the end; this process answers `{ ready: { fastUrl, hangUrl } }`,
 * `{ known: id }` once a secret is set (before the subscription's first delivery), then
 * receipts in batches (`{ receipts, rejected, hanging }`, every RECEIPT_BATCH_MS: the receipt's
 * time is taken here when the request has been read, so the batching adds no latency).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

export interface Receipt {
  webhookId: number
  /** From the staging in the write's transaction (its payload's `timestamp`) to receipt. */
  latency: number
  /** `rowId:value`, to find when the write's answer (sent after its commit) came. */
  key: string
  at: number
}

export type ReceiverMessage =
  | { ready: { fastUrl: string; hangUrl: string } }
  | { receipts: Receipt[]; rejected: number; hanging: number }
  | { known: number }

const RECEIPT_BATCH_MS = 10

const secrets = new Map<number, Webhook>()
let pending: Receipt[] = []
let rejected = 0
let hanging = 0
let reported = { rejected: 0, hanging: 0 }

/** A request the server gave up on (its timeout) is reset: not an error of the bench. */
const ignoreReset = (request: http.IncomingMessage) => request.on('error', () => {})

const fast = http.createServer((request, response) => {
  ignoreReset(request)
  const parts: Buffer[] = []
  request.on('data', (part) => parts.push(part))
  request.on('end', () => {
    const received = Date.now()
    const raw = Buffer.concat(parts).toString('utf8')
    const body = JSON.parse(raw)
    const verifier = secrets.get(Number(body.data?.webhookId))
    try {
      verifier!.verify(raw, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      })
    } catch {
      rejected++
      return response.writeHead(400).end()
    }
    pending.push({
      webhookId: Number(body.data.webhookId),
      latency: received - Date.parse(body.timestamp),
      key: `${body.data.rowId}:${body.data.fields?.[0]?.new}`,
      at: received,
    })
    response.writeHead(204).end()
  })
})
const held = new Set<http.ServerResponse>()
const hang = http.createServer((request, response) => {
  ignoreReset(request)
  request.resume()
  hanging++
  held.add(response)
})
fast.keepAliveTimeout = 60_000
for (const server of [fast, hang]) server.on('clientError', (_error, socket) => socket.destroy())

const listen = (server: http.Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)
    )
  )

const send = (message: ReceiverMessage) => process.send?.(message)

const flusher = setInterval(() => {
  if (pending.length === 0 && rejected === reported.rejected && hanging === reported.hanging) return
  const receipts = pending
  pending = []
  reported = { rejected, hanging }
  send({ receipts, rejected, hanging })
}, RECEIPT_BATCH_MS)

process.on('message', (message: any) => {
  if (message?.secret) {
    secrets.set(Number(message.secret.id), new Webhook(message.secret.secret))
    send({ known: Number(message.secret.id) })
  }
  if (message?.close) {
    clearInterval(flusher)
    for (const response of held) response.destroy()
    hang.closeAllConnections()
    fast.closeAllConnections()
    hang.close()
    fast.close()
    process.disconnect()
  }
})
// The parent gone (killed, crashed): nothing to receive for.
process.on('disconnect', () => process.exit(0))

send({ ready: { fastUrl: await listen(fast), hangUrl: await listen(hang) } })
