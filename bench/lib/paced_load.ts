import { Agent, request } from 'node:http'

export interface PacedResult {
  sent: number
  errors: number
  /** Sorted latencies in ms, each from the moment its request was due. */
  latencies: number[]
  /** Requests per second actually completed. */
  achievedRate: number
}

/**
 * An open-loop load: `rate` GET requests per second, evenly spaced, for
 * `seconds`, over at most `connections` keep-alive sockets. Each latency is
 * counted from the moment its request was due, not from when it left, so a
 * server (or client) falling behind shows up in the figures instead of
 * slowing the load down (coordinated omission).
 *
 * Why not autocannon's overallRate: it fires each connection's share of a
 * second back to back at the top of the second (a burst of `rate` requests
 * every second, not a sustained rate) and then back-fills "missed" samples at
 * a 1 ms interval, which measures a burst, not the sustained rate asked for.
 */
export async function pacedLoad(
  url: string,
  rate: number,
  seconds: number,
  connections = 20
): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const total = Math.round(rate * seconds)
  const interval = 1000 / rate
  const latencies: number[] = []
  let errors = 0
  const started = performance.now()
  const one = (due: number) =>
    new Promise<void>((resolve) => {
      const req = request(url, { agent }, (res) => {
        res.on('data', () => {})
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - due)
          else errors++
          resolve()
        })
      })
      req.on('error', () => {
        errors++
        resolve()
      })
      req.end()
    })
  const pending: Promise<void>[] = []
  for (let i = 0; i < total; i++) {
    const due = started + i * interval
    const wait = due - performance.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    pending.push(one(due))
  }
  await Promise.all(pending)
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return { sent: total, errors, latencies, achievedRate: latencies.length / elapsed }
}
