/**
 * bench:socket — the realtime channel under load, against a real server
 * process (bin/server.ts, NODE_ENV=production) over real WebSockets:
 *
 * 1. 2,000 concurrent attached sockets on one instance; server memory per idle socket (RSS delta).
 * 2. A message to a book with 1,000 connected members: send -> receipt at every member (p50/p99/max).
 *    The members' sockets live in a separate receiver process (this file, BENCH_ROLE=receivers),
 *    which timestamps each frame on arrival, before parsing it, on the system-wide monotonic
 *    clock (process.hrtime): the sender's process and its event loop stay out of the measure.
 * 3. send -> ack latency under a steady 500 messages/s (20 senders x 25/s, their own books).
 *
 * Server CPU time (utime + stime from /proc) is reported per phase: per message it is the cost
 * to remove, whatever the machine's load.
 *
 *   npm run bench:socket                                    # SQLite in tmp/bench-socket
 *   DB_CONNECTION=mysql DB_DATABASE=quire_bench npm run bench:socket
 *   BENCH_SOCKETS=2000 BENCH_MEMBERS=1000 BENCH_RATE=500 BENCH_SECONDS=10 BENCH_FANOUT_ROUNDS=20
 *   BENCH_PORT=39500 BENCH_SERVER_PROFILE=tmp/prof   (a CPU profile of the server, written at its end)
 *   BENCH_FANOUT_ROUNDS=0 or BENCH_SECONDS=0 skips that phase (to profile the other alone)
 *
 * The database is migrated fresh (migration:fresh) and seeded directly
 * (users, sessions, memberships) before the server starts.
 */
import 'reflect-metadata'
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { resolve as resolvePath } from 'node:path'
import WebSocket from 'ws'
import { bootSeedingApp } from './lib/seeding_app.js'

const APP_ROOT = new URL('../', import.meta.url)
const ROOT = fileURLToPath(APP_ROOT)
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 2000)
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1000)
const SENDERS = Number(process.env.BENCH_SENDERS ?? 20)
const RATE = Number(process.env.BENCH_RATE ?? 500)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const FANOUT_ROUNDS = Number(process.env.BENCH_FANOUT_ROUNDS ?? 20)
const PORT = Number(process.env.BENCH_PORT ?? 39500)
process.env.DATA_DIR = process.env.DATA_DIR ?? 'tmp/bench-socket'
process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn'
const DATA_DIR = resolvePath(ROOT, process.env.DATA_DIR)
mkdirSync(DATA_DIR, { recursive: true })

/** Milliseconds on the system-wide monotonic clock: comparable between processes. */
const clock = () => Number(process.hrtime.bigint()) / 1e6

type BenchSession = { userId: number; code: string; sesskey: string }
type Listener = (frame: Record<string, any>) => void
interface Client {
  ws: WebSocket
  session: BenchSession
  listeners: Set<Listener>
  send(frame: Record<string, unknown>): void
}

/** A socket attached as `session` (attach, then ping answered). */
function open(url: string, session: BenchSession): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/live/socket`, {
      perMessageDeflate: false,
    })
    const client: Client = {
      ws,
      session,
      listeners: new Set(),
      send: (frame) =>
        ws.send(
          JSON.stringify({
            o_u: session.code,
            u_c: session.code,
            sesskey: session.sesskey,
            ...frame,
          })
        ),
    }
    ws.on('message', (data) => {
      if (client.listeners.size === 0) return
      const frame = JSON.parse(data.toString())
      for (const listener of client.listeners) listener(frame)
    })
    ws.once('error', reject)
    ws.once('open', () => {
      const pong: Listener = (frame) => {
        if (frame.type !== 10) return
        client.listeners.delete(pong)
        if (frame.status === 'ok') resolve(client)
        else reject(new Error(JSON.stringify(frame)))
      }
      client.listeners.add(pong)
      client.send({ type: 7 })
      client.send({ type: 9 })
    })
  })
}

async function openAll(url: string, sessions: BenchSession[]) {
  const opened: Client[] = []
  for (let start = 0; start < sessions.length; start += 100) {
    opened.push(
      ...(await Promise.all(
        sessions.slice(start, start + 100).map((session) => open(url, session))
      ))
    )
  }
  return opened
}

/** IPC between the bench and its receiver process. */
type ToReceivers =
  | { kind: 'open'; url: string; sessions: BenchSession[] }
  | { kind: 'expect'; uuid: string }
  | { kind: 'close' }
type FromReceivers =
  { kind: 'opened'; count: number } | { kind: 'received'; uuid: string; times: number[] }

/**
 * The receiver process: holds the big book's members' sockets; for each
 * expected message uuid, answers the arrival times (taken before any parsing)
 * once every socket has it, or after 10 s with those that did.
 */
async function receivers() {
  let clients: Client[] = []
  let expected: { uuid: string; times: number[]; timer: NodeJS.Timeout } | null = null
  const seen = new WeakSet<WebSocket>()
  const finish = () => {
    if (!expected) return
    clearTimeout(expected.timer)
    const done: FromReceivers = { kind: 'received', uuid: expected.uuid, times: expected.times }
    expected = null
    process.send!(done)
  }
  const arrived = (ws: WebSocket, data: unknown) => {
    const at = clock()
    if (!expected || seen.has(ws)) return
    // A cheap test first (the uuid is unique); parse only what matches.
    const text = String(data)
    if (!text.includes(expected.uuid)) return
    const frame = JSON.parse(text)
    if (frame.type !== 1 || frame.uuid !== expected.uuid) return
    seen.add(ws)
    expected.times.push(at)
    if (expected.times.length === clients.length) finish()
  }
  process.on('message', async (message: ToReceivers) => {
    if (message.kind === 'open') {
      clients = await openAll(message.url, message.sessions)
      for (const client of clients) client.ws.on('message', (data) => arrived(client.ws, data))
      process.send!({ kind: 'opened', count: clients.length } satisfies FromReceivers)
    } else if (message.kind === 'expect') {
      for (const client of clients) seen.delete(client.ws)
      expected = { uuid: message.uuid, times: [], timer: setTimeout(finish, 10_000) }
    } else if (message.kind === 'close') {
      for (const client of clients) client.ws.terminate()
      process.exit(0)
    }
  })
}

if (process.env.BENCH_ROLE === 'receivers') {
  await receivers()
  await new Promise(() => {})
}

const USERS = Math.max(SOCKETS, MEMBERS + SENDERS)
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
    Number.NaN
  )
}
const ms = (value: number) => `${value.toFixed(1)} ms`
const figures: string[] = []
const report = (line: string) => {
  console.log(line)
  figures.push(line)
}

// ---- fixture ---------------------------------------------------------------------
execFileSync('node', ['ace', 'migration:fresh', '--force'], {
  stdio: 'inherit',
  env: process.env,
  cwd: ROOT,
})

const app = await bootSeedingApp(APP_ROOT)

const { default: db } = await import('@adonisjs/lucid/services/db')
const { UserService } = await import('#core/services/user_service')
const users = await app.container.make(UserService)
const { generateKey, hashKey } = await import('#core/auth/keys')
const { dbTimestamp } = await import('#core/db_time')
const { NO_RESTRICTIONS } = await import('#models/api_session')
const { default: User } = await import('#models/user')
const { BookService } = await import('#plugins/books/services/book_service')
const bookService = await app.container.make(BookService)

const dialect = db.connection().dialect.name
console.log(
  `\nbench:socket on ${dialect}${process.env.REDIS_HOST ? ' + Redis' : ''}: ${SOCKETS} sockets, a ${MEMBERS}-member book, ${RATE} msg/s\n`
)

const template = await users.create({
  code: 'bench0',
  email: 'bench0@example.test',
  phone: null,
  password: 'bench-socket-password',
  firstName: 'Bench',
  lastName: '0',
  isAdmin: false,
})
const templateRow = await db.from('users').where('id', template.id).first()
const now = dbTimestamp()
const rows = []
for (let index = 1; index < USERS; index++) {
  const row = { ...templateRow }
  delete row.id
  rows.push({
    ...row,
    code: `bench${index}`,
    email: `bench${index}@example.test`,
    phone: null,
    last_name: String(index),
    created_at: now,
    updated_at: now,
  })
}
for (let start = 0; start < rows.length; start += 200)
  await db.table('users').multiInsert(rows.slice(start, start + 200))
const userRows = await db
  .from('users')
  .where('code', 'like', 'bench%')
  .select('id', 'code')
  .orderBy('id')
const sessions = userRows.map((row) => ({
  userId: Number(row.id),
  code: String(row.code),
  sesskey: generateKey(),
}))
const sessionRows = sessions.map((session) => ({
  user_id: session.userId,
  key_hash: hashKey(session.sesskey),
  restrictions: null,
  created_at: now,
  last_used_at: now,
}))
for (let start = 0; start < sessionRows.length; start += 500)
  await db.table('api_sessions').multiInsert(sessionRows.slice(start, start + 500))

const actorOf = async (userId: number) => {
  const user = await User.findOrFail(userId)
  return {
    user,
    principal: user,
    session: null as any,
    restrictions: NO_RESTRICTIONS,
    onBehalf: false,
  }
}
// The big book: owned by bench0, members bench0..bench(MEMBERS-1).
await bookService.create(await actorOf(sessions[0].userId), { b_c: 'bigbook', title: 'Big book' })
const bigBook = await db
  .from('books')
  .where('owner_id', sessions[0].userId)
  .where('code', 'bigbook')
  .first()
const memberRows = sessions.slice(1, MEMBERS).map((session) => ({
  book_id: bigBook.id,
  user_id: session.userId,
  invite: 'accepted',
  right: 2,
  created_at: now,
}))
for (let start = 0; start < memberRows.length; start += 500)
  await db.table('book_members').multiInsert(memberRows.slice(start, start + 500))
// Each sender has a book of its own (the ack measurement is not a fan-out measurement).
const senders = sessions.slice(MEMBERS, MEMBERS + SENDERS)
for (const sender of senders)
  await bookService.create(await actorOf(sender.userId), { b_c: 'own', title: 'Own book' })
await app.terminate()

// ---- server -------------------------------------------------------------------------
const log = createWriteStream(`${DATA_DIR}/server.log`)
const server = spawn(
  process.execPath,
  [
    // BENCH_SERVER_PROFILE=dir: a CPU profile of the server (written when it stops).
    ...(process.env.BENCH_SERVER_PROFILE
      ? ['--cpu-prof', `--cpu-prof-dir=${resolvePath(ROOT, process.env.BENCH_SERVER_PROFILE)}`]
      : []),
    '--import=ts-node-maintained/register/esm',
    'bin/server.ts',
  ],
  {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(PORT),
      HOST: '127.0.0.1',
      // The bench's senders are well-behaved but fast: lift the per-connection flood limit.
      SOCKET_FRAMES_PER_SECOND: '10000',
      SOCKET_FRAME_BURST: '10000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }
)
server.stdout!.pipe(log)
server.stderr!.pipe(log)
const stopServer = () => {
  if (server.exitCode === null) server.kill('SIGTERM')
}
process.on('exit', stopServer)
const url = `http://127.0.0.1:${PORT}`
for (let waited = 0; ; waited += 250) {
  if (server.exitCode !== null) throw new Error(`server exited; see ${DATA_DIR}/server.log`)
  try {
    const health = await fetch(`${url}/health`)
    if (health.ok) break
  } catch {}
  if (waited > 120_000) throw new Error('server did not start')
  await sleep(250)
}
const rssOf = () => {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024
}

// ---- clients -------------------------------------------------------------------------
/** Server CPU time so far (user + system, ms), from /proc. */
const cpuOf = () => {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

await sleep(1000)
const rssBefore = rssOf()
const startedAt = performance.now()
// The big book's members (bench1..bench(MEMBERS-1)) in the receiver process, the others here.
const memberSessions = sessions.slice(1, Math.min(MEMBERS, SOCKETS))
const receiverProcess: ChildProcess = fork(fileURLToPath(import.meta.url), [], {
  execArgv: ['--import=ts-node-maintained/register/esm'],
  env: { ...process.env, BENCH_ROLE: 'receivers' },
})
process.on('exit', () => receiverProcess.kill('SIGKILL'))
const fromReceivers = (kind: FromReceivers['kind'], uuid?: string) =>
  new Promise<FromReceivers>((resolve) => {
    const listener = (message: FromReceivers) => {
      if (message.kind !== kind || (uuid && message.kind === 'received' && message.uuid !== uuid))
        return
      receiverProcess.off('message', listener)
      resolve(message)
    }
    receiverProcess.on('message', listener)
  })
const toReceivers = (message: ToReceivers) => receiverProcess.send(message)
const receiversOpened = fromReceivers('opened')
toReceivers({ kind: 'open', url, sessions: memberSessions })
const clients: Client[] = [
  ...(await openAll(url, sessions.slice(0, 1))),
  ...(await openAll(url, sessions.slice(Math.min(MEMBERS, SOCKETS), SOCKETS))),
]
const memberCount = ((await receiversOpened) as Extract<FromReceivers, { kind: 'opened' }>).count
report(
  `sockets: ${clients.length + memberCount} attached in ${((performance.now() - startedAt) / 1000).toFixed(1)} s ` +
    `(${memberCount} in the receiver process)`
)
await sleep(2000)
const rssAfter = rssOf()
report(
  `memory: server RSS ${(rssBefore / 1048576).toFixed(0)} MiB -> ${(rssAfter / 1048576).toFixed(0)} MiB with ${clients.length + memberCount} idle sockets: ${((rssAfter - rssBefore) / (clients.length + memberCount) / 1024).toFixed(1)} KiB per idle socket`
)

// ---- the socket layer alone: ping -> ack ping (per-frame auth, routing, no domain work) ---------
{
  const pinger = clients[clients.length - 1]
  const pings: number[] = []
  for (let index = 0; index < 200; index++) {
    const sentAt = performance.now()
    await new Promise<void>((resolve) => {
      const listener: Listener = (frame) => {
        if (frame.type !== 10) return
        pinger.listeners.delete(listener)
        pings.push(performance.now() - sentAt)
        resolve()
      }
      pinger.listeners.add(listener)
      pinger.send({ type: 9 })
    })
  }
  report(
    `ping->ack ping (socket layer only, idle server): p50 ${ms(percentile(pings, 50))}, p99 ${ms(percentile(pings, 99))}`
  )
}

// ---- fan-out: one message to a book with MEMBERS connected members -----------------------
const owner = clients[0]
const fanout: number[] = []
const acks: number[] = []
const fanoutCpuBefore = cpuOf()
for (let round = 0; round < FANOUT_ROUNDS; round++) {
  const uuid = randomUUID()
  const received = fromReceivers('received', uuid)
  toReceivers({ kind: 'expect', uuid })
  await sleep(50)
  const ackListener: Listener = (frame) => {
    if (frame.type === 2 && frame.uuid === uuid) {
      owner.listeners.delete(ackListener)
      acks.push(clock() - sentAt)
    }
  }
  owner.listeners.add(ackListener)
  const sentAt = clock()
  owner.send({
    type: 1,
    uuid,
    smid: 0,
    del: false,
    msg: `fan-out round ${round}`,
    b_o: 'bench0',
    b_c: 'bigbook',
  })
  const { times } = (await received) as Extract<FromReceivers, { kind: 'received' }>
  if (times.length < memberCount)
    throw new Error(`fan-out round ${round}: ${times.length}/${memberCount} received`)
  const latencies = times.map((at) => at - sentAt)
  // Round 0 warms up (lazy-loaded handlers, JIT, the member cache): reported apart.
  if (round === 0) report(`fan-out warm-up round: max ${ms(Math.max(...latencies))}`)
  else fanout.push(...latencies)
  await sleep(300)
}
if (FANOUT_ROUNDS > 1) {
  report(
    `fan-out: ${FANOUT_ROUNDS - 1} messages to a book of ${memberCount + 1} connected members (${fanout.length} deliveries): ` +
      `send->receipt p50 ${ms(percentile(fanout, 50))}, p99 ${ms(percentile(fanout, 99))}, max ${ms(Math.max(...fanout))}; ` +
      `sender ack p50 ${ms(percentile(acks, 50))}; server CPU ${ms((cpuOf() - fanoutCpuBefore) / FANOUT_ROUNDS)} per message`
  )
}

// ---- send -> ack under a steady rate -----------------------------------------------------------
const senderClients =
  SOCKETS >= MEMBERS + SENDERS ? clients.slice(1, 1 + SENDERS) : await openAll(url, senders)
const ackLatencies: number[] = []
const pending = new Map<string, number>()
let failures = 0
for (const sender of senderClients) {
  sender.listeners.add((frame) => {
    if (frame.type !== 2) return
    const sentAt = pending.get(frame.uuid)
    if (sentAt === undefined) return
    pending.delete(frame.uuid)
    if (frame.status === 'ok') ackLatencies.push(performance.now() - sentAt)
    else if (failures++ === 0) console.log('first refusal:', JSON.stringify(frame))
  })
}
const perSender = RATE / senderClients.length
const interval = 1000 / perSender
const total = Math.round(RATE * SECONDS)
let sent = 0
const rateStarted = performance.now()
const rateCpuBefore = cpuOf()
await new Promise<void>((resolve) => {
  // One tick per interval; each sender sends its due messages (keeps the aggregate rate steady).
  const timers = senderClients.map((sender, index) =>
    setTimeout(
      () => {
        const timer = setInterval(() => {
          if (sent >= total) {
            clearInterval(timer)
            if (timers.every(Boolean)) resolve()
            return
          }
          sent++
          const uuid = randomUUID()
          pending.set(uuid, performance.now())
          sender.send({
            type: 1,
            uuid,
            smid: 0,
            del: false,
            msg: `rate ${sent}`,
            b_o: sender.session.code,
            b_c: 'own',
          })
        }, interval)
      },
      (index * interval) / senderClients.length
    )
  )
})
const elapsed = (performance.now() - rateStarted) / 1000
for (let waited = 0; pending.size > 0 && waited < 10_000; waited += 50) await sleep(50)
const rateCpu = cpuOf() - rateCpuBefore
report(
  `send->ack: ${sent} messages in ${elapsed.toFixed(1)} s (${(sent / elapsed).toFixed(0)} msg/s, ${senderClients.length} senders): ` +
    `p50 ${ms(percentile(ackLatencies, 50))}, p90 ${ms(percentile(ackLatencies, 90))}, p99 ${ms(percentile(ackLatencies, 99))}; ` +
    `${failures} refused, ${pending.size} unanswered; server CPU ${ms(rateCpu / Math.max(1, sent))} per message ` +
    `(${((rateCpu / 1000 / elapsed) * 100).toFixed(0)}% of a core)`
)

const fanoutOk = percentile(fanout, 99) <= 200
const ackOk = percentile(ackLatencies, 50) <= 5
report(
  `targets: fan-out p99 <= 200 ms ${fanoutOk ? 'MET' : 'MISSED'}; send->ack p50 <= 5 ms at ${RATE} msg/s ${ackOk ? 'MET' : 'MISSED'}`
)

for (const client of clients) client.ws.terminate()
toReceivers({ kind: 'close' })
const exited = new Promise((done) => server.once('exit', done))
stopServer()
await Promise.race([exited, sleep(15_000)])
// A server still shutting down after 15 s is not left behind.
if (server.exitCode === null && server.signalCode === null) {
  console.log('server did not stop within 15 s of SIGTERM: killed')
  server.kill('SIGKILL')
}
console.log('\nFigures:\n' + figures.map((line) => `  ${line}`).join('\n'))
process.exit(0)
