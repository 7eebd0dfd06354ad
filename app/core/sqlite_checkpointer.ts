import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'

/**
 * WAL checkpoints off the commit path (issue 23 item 2). With SQLite's default
 * wal_autocheckpoint (1,000 pages) the COMMIT that takes the WAL past the bound copies the WAL's
 * pages back into the database file and syncs it, inside the request that committed: 16-22 % of
 * the write CPU under --cpu-prof. Here each write connection's autocheckpoint is raised to a
 * backstop (AUTOCHECKPOINT_PAGES, only reached if the checkpointer falls behind or is not running)
 * and a worker thread of the process checkpoints on its own connection instead:
 *
 * - every INTERVAL_MS, when some connection committed since its last look (PRAGMA data_version),
 *   a PASSIVE checkpoint: it copies what no reader still needs and never blocks a reader or a
 *   writer (writers keep appending to the WAL meanwhile). A page written many times in between
 *   is copied once, where the autocheckpoint copied it at every 1,000 pages;
 * - when the WAL still holds more than RESTART_PAGES frames after it (readers kept old snapshots
 *   past several checkpoints, or the writers outran the thread), a TRUNCATE checkpoint, waiting at
 *   most TRUNCATE_WAIT_MS for them. journal_size_limit cuts the WAL file back when the WAL
 *   restarts. The WAL restarts (is written from its start again) at the first write after a
 *   checkpoint that copied all of it: while the thread copies, a COMMIT's own checkpoint waits
 *   its turn, so under a stream of writes the WAL may pass the backstop by what is written during
 *   one of the thread's checkpoints.
 *
 * Every process that writes (web, queue:work, outbox:send, ace commands, tests) opens its write
 * connection through config/database.ts, which attaches it here; when the connection closes
 * (shutdown, a test's reconnection) the worker stops and the connection checkpoints what it can
 * (PASSIVE) before closing, so a process leaves its commits checkpointed. Durability is unchanged:
 * synchronous stays NORMAL, a commit is in the WAL before it returns, and a checkpoint is the
 * same operation whoever runs it.
 */
/*
 * Measured (bench:tables, 100,000 rows, this commit's build alternating with c578777's as
 * BENCH_BEFORE_SERVER, load average 7-10 on the shared 2 cores; with readCached's epochs; the
 * server's CPU includes this thread's): updateTableValue at 8 clients 3,238 vs 3,052/s, server CPU
 * 0.177 vs 0.197 ms an update; createOrUpdateTableRows 8 x 1,000 rows 10,993 vs 9,568 rows/s (CPU
 * 0.056 vs 0.063 ms a row), 1 x 10,000 rows 11,685 vs 10,172 rows/s (CPU 0.055 vs 0.061 ms).
 */
export const AUTOCHECKPOINT_PAGES = 10_000
export const RESTART_PAGES = 16_384
export const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024
const INTERVAL_MS = 200
const TRUNCATE_WAIT_MS = 200

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.filename)
db.pragma('busy_timeout = ' + workerData.truncateWaitMs)
db.pragma('journal_size_limit = ' + workerData.journalSizeLimit)
const dataVersion = db.prepare('PRAGMA data_version').pluck()
let seen = -1
let closed = false
let paused = false
function checkpoint() {
  const [passive] = db.pragma('wal_checkpoint(PASSIVE)')
  if (passive.log > workerData.restartPages) return db.pragma('wal_checkpoint(TRUNCATE)')[0]
  return passive
}
const timer = setInterval(() => {
  if (closed || paused) return
  try {
    const version = dataVersion.get()
    if (version === seen) return
    seen = version
    checkpoint()
  } catch {}
}, workerData.intervalMs)
parentPort.on('message', (message) => {
  if (message.type === 'checkpoint') {
    let result = null
    try { result = checkpoint() } catch (error) { result = { error: String(error) } }
    parentPort.postMessage({ type: 'checkpointed', id: message.id, result })
  } else if (message.type === 'pause') {
    paused = message.paused
    parentPort.postMessage({ type: 'checkpointed', id: message.id, result: null })
  } else if (message.type === 'close') {
    closed = true
    clearInterval(timer)
    try { db.close() } catch {}
    parentPort.close()
  }
})
`

interface Checkpointer {
  worker: Worker
  waiting: Map<number, (result: CheckpointResult | null) => void>
  next: number
}

export interface CheckpointResult {
  busy: number
  log: number
  checkpointed: number
}

const checkpointers = new Map<object, Checkpointer>()

/** Whether a better-sqlite3 connection is on a file (not :memory:, not a temporary database). */
const onFile = (connection: any) => !connection.memory && connection.name && connection.name !== ''

/**
 * Configures a write connection (config/database.ts's afterCreate) and starts its process's
 * checkpointer.
 */
export function attachCheckpointer(connection: any) {
  if (!onFile(connection)) return
  connection.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
  connection.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`)
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      filename: connection.name,
      intervalMs: INTERVAL_MS,
      restartPages: RESTART_PAGES,
      truncateWaitMs: TRUNCATE_WAIT_MS,
      journalSizeLimit: JOURNAL_SIZE_LIMIT,
    },
  })
  const checkpointer: Checkpointer = { worker, waiting: new Map(), next: 1 }
  worker.on('message', (message) => {
    if (message?.type !== 'checkpointed') return
    checkpointer.waiting.get(message.id)?.(message.result ?? null)
    checkpointer.waiting.delete(message.id)
  })
  worker.on('error', () => {}) // a checkpointer that fails leaves the backstop autocheckpoint
  worker.on('exit', () => {
    for (const resolve of checkpointer.waiting.values()) resolve(null)
    checkpointer.waiting.clear()
  })
  // After the listeners: a Worker's first 'message' listener refs its port again, and a ref'd
  // port keeps the process alive once everything else has closed (seen in a stuck shutdown).
  worker.unref()
  checkpointers.set(connection, checkpointer)
  const close = connection.close.bind(connection)
  connection.close = () => {
    checkpointers.delete(connection)
    worker.postMessage({ type: 'close' })
    try {
      if (connection.open) connection.pragma('wal_checkpoint(PASSIVE)')
    } catch {}
    return close()
  }
}

/**
 * Asks the checkpointer of `connection` for a checkpoint now and answers its result (busy, WAL
 * frames, frames checkpointed); null without a checkpointer. For tests and operators' tools.
 */
export function checkpointNow(connection: object): Promise<CheckpointResult | null> {
  return ask(connection, { type: 'checkpoint' })
}

/**
 * Stops (or restarts) the timed checkpoints of `connection`'s checkpointer: for tests of what
 * holds without it (the backstop autocheckpoint). Resolves once the thread has taken it.
 */
export async function pauseCheckpoints(connection: object, paused: boolean) {
  await ask(connection, { type: 'pause', paused })
}

function ask(connection: object, message: Record<string, unknown>) {
  const checkpointer = checkpointers.get(connection)
  if (!checkpointer) return Promise.resolve(null)
  const id = checkpointer.next++
  return new Promise<CheckpointResult | null>((resolve) => {
    checkpointer.waiting.set(id, resolve)
    checkpointer.worker.postMessage({ ...message, id })
  })
}
