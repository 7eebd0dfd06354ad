/**
 * bench:webhooks — issue 20 item 7, over HTTP against the compiled server (what `npm start`
 * serves), with receivers on 127.0.0.1 in a process of their own (bench/lib/webhook_receivers.ts,
 * at the default priority: a receiver is another machine in production, it must not share the
 * load generator's event loop, where a receipt would wait behind the writers' clients):
 *
 *   1. BENCH_CHANGES row changes (updateTableValue, bypassUrlTrigger=false, distinct rows, 8
 *      concurrent clients) delivered to a fast receiver: throughput, and p50/p99 from commit to
 *      receipt (the payload's `timestamp`, set in the write's transaction, to the moment the
 *      receiver has read the request);
 *   2. updateTableValue's rate on a table with 3 active subscriptions against a table without,
 *      in alternating rounds (each round's deliveries drain before the next round), and the
 *      CPU time per write of the server and its senders (its forked sender, the queue:work
 *      process), while writing and until the deliveries were received: on a shared, loaded
 *      machine the rates swing with the load, the CPU time per write much less;
 *   3. a receiver that never answers (held until WEBHOOKS_TIMEOUT_MS) next to a fast one on the
 *      same table: the fast one's p50/p99 while the other hangs.
 *
 *   npm run bench:webhooks                             # SQLite in tmp/bench-webhooks, 2,000 changes
 *   BENCH_CHANGES=10000 npm run bench:webhooks         # the issue's figure
 *   DB_CONNECTION=mysql DB_DATABASE=quire_bench_webhooks REDIS_HOST=127.0.0.1 npm run bench:webhooks
 *
 * With REDIS_HOST the web server runs no jobs (QUEUE_INLINE_WORKER=false) and a separate
 * `queue:work` process of the same build sends every delivery, as a deployment does.
 * Settings: BENCH_CHANGES (2,000), BENCH_UPDATES (updateTableValue per round, 1,000),
 * BENCH_ROUNDS (4 each, with and without subscriptions), BENCH_WRITERS (8), BENCH_HANG_CHANGES
 * (300), BENCH_HANG_TIMEOUT_MS (the server's WEBHOOKS_TIMEOUT_MS, 5,000), BENCH_BUILD_DIR.
 */
import { fork, spawn } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { apiClient } from './lib/api_client.js'
import {
  ROOT,
  ace,
  benchEnv,
  buildCompiled,
  cpuMsOf,
  signIn,
  startQuire,
} from './lib/quire_process.js'
import type { Receipt, ReceiverMessage } from './lib/webhook_receivers.js'

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

// ---- receivers on 127.0.0.1, in their own process (bench/lib/webhook_receivers.ts) -----------
const receiverProcess = fork(join(ROOT, 'bench/lib/webhook_receivers.ts'), [], {
  execArgv: ['--import=ts-node-maintained/register/esm'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
})
const receipts: Receipt[] = []
let rejected = 0
let hanging = 0
const acks = new Map<number, () => void>()
const { fastUrl, hangUrl } = await new Promise<{ fastUrl: string; hangUrl: string }>(
  (resolve, reject) => {
    receiverProcess.once('exit', (code) => reject(new Error(`the receivers exited (${code})`)))
    receiverProcess.on('message', (message: ReceiverMessage) => {
      if ('ready' in message) resolve(message.ready)
      else if ('known' in message) acks.get(message.known)?.()
      else {
        receipts.push(...message.receipts)
        rejected = message.rejected
        hanging = message.hanging
      }
    })
  }
)

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
/**
 * CPU time (ms) used so far by what serves and sends: the server, its children (the forked sender
 * with OUTBOX_SENDER=process) and, on Redis, the queue:work process. Not the receivers'.
 */
function serverCpuMs() {
  const pid = server.child.pid
  let children: number[] = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter(Boolean)
      .map(Number)
  } catch {}
  return [pid, ...children, ...(worker ? [worker.pid] : [])].reduce(
    (total: number, each) => total + (cpuMsOf(each) || 0),
    0
  )
}
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
  const id = Number(webhook.id)
  // The receivers know its secret before its first delivery.
  await new Promise<void>((resolve) => {
    acks.set(id, resolve)
    receiverProcess.send({ secret: { id, secret } })
  })
  return id
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
  const cpuBefore = serverCpuMs()
  const started = performance.now()
  const rate = await writeCells(table, CHANGES, 1)
  const written = performance.now()
  const cpuWritten = serverCpuMs()
  await drain([id], CHANGES)
  const done = performance.now()
  const cpuDone = serverCpuMs()
  const latencies = receivedBy(id)
    .map((r) => r.latency)
    .sort((a, b) => a - b)
  record(
    `${CHANGES.toLocaleString('en')} row changes delivered`,
    `all in ${((done - started) / 1000).toFixed(1)} s (writes ${((written - started) / 1000).toFixed(1)} s at ${rate.toFixed(0)}/s; last delivery ${((done - written) / 1000).toFixed(1)} s after the last write), ${(CHANGES / ((done - started) / 1000)).toFixed(0)} deliveries/s`,
    'all within 30 s'
  )
  record(
    'server CPU per change (one subscription)',
    `${((cpuDone - cpuBefore) / CHANGES).toFixed(2)} ms (${((cpuWritten - cpuBefore) / CHANGES).toFixed(2)} ms while writing, ${((cpuDone - cpuWritten) / CHANGES).toFixed(2)} ms after the last write)`,
    '-'
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
  /** Server CPU per write: while writing, and until its deliveries were received. */
  const cpu: Record<'with' | 'without', { writing: number; all: number }[]> = {
    with: [],
    without: [],
  }
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
      const before = serverCpuMs()
      rates[mode].push(await writeCells(table, UPDATES, (value += UPDATES)))
      const written = serverCpuMs()
      if (mode === 'with') {
        expected += 3 * UPDATES
        await drain(ids, expected)
      }
      cpu[mode].push({
        writing: (written - before) / UPDATES,
        all: (serverCpuMs() - before) / UPDATES,
      })
    }
  }
  const withHooks = median(rates.with)
  const without = median(rates.without)
  record(
    `updateTableValue, ${WRITERS} clients, 3 subscriptions vs none`,
    `${withHooks.toFixed(0)}/s with, ${without.toFixed(0)}/s without (with = ${((withHooks / without) * 100).toFixed(0)} % of without; rounds with ${rates.with.map((r) => r.toFixed(0)).join(', ')}; without ${rates.without.map((r) => r.toFixed(0)).join(', ')})`,
    'within 10 %'
  )
  const cpuOf = (mode: 'with' | 'without', part: 'writing' | 'all') =>
    median(cpu[mode].map((each) => each[part])).toFixed(2)
  record(
    'server CPU per updateTableValue, 3 subscriptions vs none',
    `while writing ${cpuOf('with', 'writing')} vs ${cpuOf('without', 'writing')} ms; with its deliveries ${cpuOf('with', 'all')} vs ${cpuOf('without', 'all')} ms`,
    '-'
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
receiverProcess.send({ close: true })
worker?.kill('SIGTERM')
await server.stop()

console.log(`\n| measure (${dialect}) | result | target |\n|---|---|---|`)
for (const [label, result, target] of figures) console.log(`| ${label} | ${result} | ${target} |`)
