/*
| bench:api's in-process measure (BENCH_INPROCESS=1): copied next to a compiled build's
| bin/server.js and run there, it boots that build's server as bin/server.js does (port 0) and
| emits fake getUserInfo requests on it, in batches as the Node server hands them over: no
| socket, no HTTP parsing, so the CPU time per call is the JavaScript of api.php alone, far less
| moved by other load than a loopback run. Prints one JSON line: each round's CPU µs per call.
| HARNESS_QUERY (the query string), HARNESS_N (calls a round), HARNESS_ROUNDS, HARNESS_BATCH.
*/
import 'reflect-metadata'
import './checkout.js'
import { Ignitor, prettyPrintError } from '@adonisjs/core'
import { createQuireServer } from '#core/http/node_server'

const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath) =>
  filePath.startsWith('./') || filePath.startsWith('../')
    ? import(new URL(filePath, APP_ROOT).href)
    : import(filePath)

let server
await new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => app.booting(() => import('#start/env')))
  .httpServer()
  .start((handler) => (server = createQuireServer(handler)))
  .catch((error) => {
    prettyPrintError(error)
    process.exit(1)
  })

const url = `/live/api.php?${process.env.HARNESS_QUERY}`
const call = () =>
  new Promise((resolve, reject) => {
    const req = {
      url,
      method: 'GET',
      headers: { host: '127.0.0.1' },
      socket: { remoteAddress: '127.0.0.1' },
      destroyed: false,
      complete: true,
      on() {},
      resume() {},
    }
    const res = {
      headersSent: false,
      writeHead() {
        this.headersSent = true
      },
      end: resolve,
      destroy: reject,
    }
    server.emit('request', req, res)
  })

const first = await call()
if (!String(first).includes('"status":"ok"')) {
  console.error(`getUserInfo failed: ${first}`)
  process.exit(1)
}
const calls = Number(process.env.HARNESS_N ?? 10_000)
const batch = Number(process.env.HARNESS_BATCH ?? 32)
const rounds = Number(process.env.HARNESS_ROUNDS ?? 8)
const cpuUs = []
// Round 0 warms the path up and is not counted.
for (let round = 0; round <= rounds; round++) {
  const before = process.cpuUsage()
  for (let done = 0; done < calls; done += batch)
    await Promise.all(Array.from({ length: batch }, call))
  const used = process.cpuUsage(before)
  if (round > 0) cpuUs.push((used.user + used.system) / calls)
}
console.log(JSON.stringify({ cpuUs }))
process.exit(0)
