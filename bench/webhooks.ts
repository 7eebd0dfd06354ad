/**
 * bench:webhooks — issue 20 item 7, over HTTP against the compiled server (what `npm start`
 * serves), with receivers on 127.0.0.1 in this process:
 *
 *   1. BENCH_CHANGES row changes (updateTableValue, bypassUrlTrigger=false, distinct rows, 8
 *      concurrent clients) delivered to a fast receiver: throughput, and p50/p99 from commit to
 *      receipt (the payload's `timestamp`, set in the write's transaction, to the moment the
 *      receiver has read the request);
 *   2. updateTableValue's rate on a table with 3 active subscriptions against a table without,
 *      in alternating rounds (each round's deliveries drain before the next round);
 *   3. a receiver that never answers (held until WEBHOOKS_TIMEOUT_MS) next to a fast one on the
 *      same table: the fast one's p50/p99 while the other hangs.
 *
 *   npm run bench:webhooks                             # SQLite in tmp/bench-webhooks, 2,000 changes
 *   BENCH_CHANGES=10000 npm run bench:webhooks         # the figure
 *   DB_CONNECTION=mysql DB_DATABASE=quire_bench_webhooks REDIS_HOST=127.0.0.1 npm run bench:webhooks
 *
 * With REDIS_HOST the web server runs no jobs (QUEUE_INLINE_WORKER=false) and a separate
 * `queue:work` process of the same build sends every delivery, as a deployment does.
 * Settings: BENCH_CHANGES (2,000), BENCH_UPDATES (updateTableValue per round, 1,000),
 * BENCH_ROUNDS (4 each, with and without subscriptions), BENCH_WRITERS (8), BENCH_HANG_CHANGES
 * (300), BENCH_HANG_TIMEOUT_MS (the server's WEBHOOKS_TIMEOUT_MS, 5,000), BENCH_BUILD_DIR.
 */
import { spawn } from 'node:child_process'
import http from 'node:http'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { apiClient } from './lib/api_client.js'
import { ROOT, ace, benchEnv, buildCompiled, signIn, startQuire } from './lib/quire_process.js'

const CHANGES = Number(process.env.BENCH_CHANGES ?? 2_000)
const UPDATES = Number(process.env.BENCH_UPDATES ?? 1_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const WRITERS = Number(process.env.BENCH_WRITERS ?? 8)
const HANG_CHANGES = Number(process.env.BENCH_HANG_CHANGES ?? 300)
const HANG_TIMEOUT_MS = Number(process.env.BENCH_HANG_TIMEOUT_MS ?? 5_000)
const DRAIN_LIMIT_MS = 300_000
const redis = Boolean(process.env.REDIS_HOST)

process.env.DATA_DIR = process.env.DATA_DIR ?? 'tmp/bench-webhooks'
mkdirSync(process.env.DATA_DIR, { recursive: true })
const env = benchEnv({
  DATA_DIR: process.env.DATA_DIR,
  // The receivers are on loopback, which deliveries refuse unless allowed.
  WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8',
  WEBHOOKS_TIMEOUT_MS: String(HANG_TIMEOUT_MS),
  ...(redis ? { QUEUE_INLINE_WORKER: 'false' } : {}),
})
ace(env, 'migration:fresh', '--force')
ace(env, 'user:create', 'bench', 'bench@example.test', 'bench-password')

// ---- receivers on 127.0.0.1 -------------------------------------------------------------------
interface Receipt {
  webhookId: number
  /** From the staging in the write's transaction (its payload's `timestamp`) to receipt. */
  latency: number
  /** `rowId:value`, to find when the write's answer (sent after its commit) came. */
  key: string
  at: number
}
const receipts: Receipt[] = []
let rejected = 0
const secrets = new Map<number, Webhook>()

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
    receipts.push({
      webhookId: Number(body.data.webhookId),
      latency: received - Date.parse(body.timestamp),
      key: `${body.data.rowId}:${body.data.fields?.[0]?.new}`,
      at: received,
    })
    response.writeHead(204).end()
  })
})
let hanging = 0
const held = new Set<http.ServerResponse>()
/** Reads the request and never answers: the server's attempt ends at its timeout. */
const hang = http.createServer((request, response) => {
  ignoreReset(request)
  request.resume()
  hanging++
  held.add(response)
})
const listen = (server: http.Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)
    )
  )
fast.keepAliveTimeout = 60_000
for (const server of [fast, hang]) server.on('clientError', (_error, socket) => socket.destroy())
const fastUrl = await listen(fast)
const hangUrl = await listen(hang)

// ---- the server (and, on Redis, a separate worker) --------------------------------------------
const buildDir = process.env.BENCH_BUILD_DIR ?? 'tmp/bench-build'
const compiled = buildCompiled(buildDir)
const server = await startQuire(env, { compiled })
const worker = redis
  ? spawn(process.execPath, [join(ROOT, buildDir, 'ace.js'), 'queue:work'], {
      cwd: join(ROOT, buildDir),
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
  : null
const session = await signIn(server.url, 'bench@example.test', 'bench-password')
const client = apiClient(server.url, session, Math.max(16, WRITERS))
const api = client.call
const dialect = env.DB_CONNECTION === 'mysql' ? 'MariaDB + Redis (queue:work)' : 'SQLite'
console.log(`\nbench:webhooks on ${dialect}, ${CHANGES.toLocaleString('en')} changes\n`)

await api('createBook', { b_c: 'hooks' })

/** A table with one integer field and `rows` rows (written without firing anything). */
async function tableWithRows(name: string, rows: number) {
  const { catId } = await api('createTable', {
    b_o: 'bench',
    b_c: 'hooks',
    name,
    fields: [{ name: 'Qty', type: 'integer' }],
  })
  const tables = await api('getBookTables', { b_o: 'bench', b_c: 'hooks', includeFields: 'true' })
  const fieldId = Number(
    tables.bookTables.categories.find((category: any) => category.id === catId).fields[0].id
  )
  const rowIds: number[] = []
  for (let start = 0; start < rows; start += 1000) {
    const batch = Object.fromEntries(
      Array.from({ length: Math.min(1000, rows - start) }, (_, index) => [
        `tmp${start + index}`,
        { [fieldId]: 0 },
      ])
    )
    const written = await api('createOrUpdateTableRows', { b_o: 'bench', catId, rows: batch })
    for (const row of written.newRows) rowIds.push(Number(row.id))
  }
  return { catId: Number(catId), fieldId, rowIds }
}

async function subscribe(catId: number, url: string) {
  const { webhook, secret } = await api('createWebhook', {
    b_o: 'bench',
    catId,
    url,
    events: 'row.updated',
  })
  secrets.set(Number(webhook.id), new Webhook(secret))
  return Number(webhook.id)
}

/** When each write's answer came (`rowId:value`): its commit was before. */
const answered = new Map<string, number>()

/** `count` updateTableValue calls over WRITERS clients, row i of `rowIds` set to `value + i`; calls/s. */
async function writeCells(
  table: { fieldId: number; rowIds: number[] },
  count: number,
  value: number
) {
  const started = performance.now()
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let i = writer; i < count; i += WRITERS) {
        const rowId = table.rowIds[i % table.rowIds.length]
        await api('updateTableValue', {
          rowId: String(rowId),
          fieldId: table.fieldId,
          value: String(value + i),
          bypassUrlTrigger: 'false',
        })
        answered.set(`${rowId}:${value + i}`, Date.now())
      }
    })
  )
  return count / ((performance.now() - started) / 1000)
}

const receivedBy = (webhookId: number) => receipts.filter((r) => r.webhookId === webhookId)

async function drain(webhookIds: number[], expected: number) {
  const deadline = Date.now() + DRAIN_LIMIT_MS
  const count = () => receipts.filter((r) => webhookIds.includes(r.webhookId)).length
  while (count() < expected) {
    if (Date.now() > deadline)
      throw new Error(`only ${count()} of ${expected} deliveries within ${DRAIN_LIMIT_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]
const figures: [string, string, string][] = []
function record(label: string, result: string, target: string) {
  figures.push([label, result, target])
  console.log(`${label}: ${result} (target ${target})`)
}

// ---- 1. throughput and latency to a fast receiver ---------------------------------------------
{
  const table = await tableWithRows('Deliveries', CHANGES)
  const id = await subscribe(table.catId, fastUrl)
  const started = performance.now()
  const rate = await writeCells(table, CHANGES, 1)
  const written = performance.now()
  await drain([id], CHANGES)
  const done = performance.now()
  const latencies = receivedBy(id)
    .map((r) => r.latency)
    .sort((a, b) => a - b)
  record(
    `${CHANGES.toLocaleString('en')} row changes delivered`,
    `all in ${((done - started) / 1000).toFixed(1)} s (writes ${((written - started) / 1000).toFixed(1)} s at ${rate.toFixed(0)}/s; last delivery ${((done - written) / 1000).toFixed(1)} s after the last write), ${(CHANGES / ((done - started) / 1000)).toFixed(0)} deliveries/s`,
    'all within 30 s'
  )
  // The commit is between the staging (in the transaction) and the write's answer: both bounds.
  const afterAnswer = receivedBy(id)
    .map((r) => Math.max(0, r.at - (answered.get(r.key) ?? r.at)))
    .sort((a, b) => a - b)
  record(
    'commit to receipt',
    `from staging p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms; from the write's answer p50 ${percentile(afterAnswer, 50)} ms, p99 ${percentile(afterAnswer, 99)} ms`,
    'p99 < 1 s'
  )
}

// ---- 2. updateTableValue with 3 subscriptions and without, alternating rounds ------------------
{
  const hooked = await tableWithRows('Hooked', UPDATES)
  const plain = await tableWithRows('Plain', UPDATES)
  const ids = [
    await subscribe(hooked.catId, `${fastUrl}?a`),
    await subscribe(hooked.catId, `${fastUrl}?b`),
    await subscribe(hooked.catId, `${fastUrl}?c`),
  ]
  const rates: Record<'with' | 'without', number[]> = { with: [], without: [] }
  let value = 1_000_000
  let expected = 0
  // Warm-up of both, then rounds in alternating order.
  await writeCells(plain, UPDATES, (value += UPDATES))
  await writeCells(hooked, UPDATES, (value += UPDATES))
  expected += 3 * UPDATES
  await drain(ids, expected)
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2
      ? (['without', 'with'] as const)
      : (['with', 'without'] as const)) {
      const table = mode === 'with' ? hooked : plain
      rates[mode].push(await writeCells(table, UPDATES, (value += UPDATES)))
      if (mode === 'with') {
        expected += 3 * UPDATES
        await drain(ids, expected)
      }
    }
  }
  const withHooks = median(rates.with)
  const without = median(rates.without)
  record(
    `updateTableValue, ${WRITERS} clients, 3 subscriptions vs none`,
    `${withHooks.toFixed(0)}/s with, ${without.toFixed(0)}/s without (with = ${((withHooks / without) * 100).toFixed(0)} % of without; rounds with ${rates.with.map((r) => r.toFixed(0)).join(', ')}; without ${rates.without.map((r) => r.toFixed(0)).join(', ')})`,
    'within 10 %'
  )
}

// ---- 3. a hanging receiver next to a fast one ---------------------------------------------------
{
  const table = await tableWithRows('Pair', HANG_CHANGES)
  await subscribe(table.catId, hangUrl)
  const id = await subscribe(table.catId, fastUrl)
  const started = performance.now()
  await writeCells(table, HANG_CHANGES, 1)
  await drain([id], HANG_CHANGES)
  const done = performance.now()
  const latencies = receivedBy(id)
    .map((r) => r.latency)
    .sort((a, b) => a - b)
  record(
    `a hanging receiver (held ${HANG_TIMEOUT_MS} ms) next to a fast one, ${HANG_CHANGES} changes`,
    `fast one: all in ${((done - started) / 1000).toFixed(1)} s, p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms; ${hanging} requests held by the hanging one meanwhile`,
    'the fast one as without it'
  )
}

if (rejected) console.log(`${rejected} deliveries failed verification`)
client.close()
for (const response of held) response.destroy()
hang.closeAllConnections()
fast.closeAllConnections()
hang.close()
fast.close()
worker?.kill('SIGTERM')
await server.stop()

console.log(`\n| measure (${dialect}) | result | target |\n|---|---|---|`)
for (const [label, result, target] of figures) console.log(`| ${label} | ${result} | ${target} |`)
