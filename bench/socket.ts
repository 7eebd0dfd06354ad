/**
 * bench:socket — the realtime channel under load, against a real server
 * process (bin/server.ts, NODE_ENV=production) over real WebSockets:
 *
 * 1. 2,000 concurrent attached sockets on one instance; server memory per idle socket (RSS delta).
 * 2. A message to a book with 1,000 connected members: send -> receipt at every member (p50/p99/max).
 * 3. send -> ack latency under a steady 500 messages/s (20 senders x 25/s, their own books).
 *
 *   npm run bench:socket                                    # SQLite in tmp/bench-socket
 *   DB_CONNECTION=mysql DB_DATABASE=quire_bench npm run bench:socket
 *   BENCH_SOCKETS=2000 BENCH_MEMBERS=1000 BENCH_RATE=500 BENCH_SECONDS=10 BENCH_FANOUT_ROUNDS=20
 *
 * The database is migrated fresh (migration:fresh) and seeded directly
 * (users, sessions, memberships) before the server starts.
 */
import 'reflect-metadata'
import { execFileSync, spawn } from 'node:child_process'
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Ignitor } from '@adonisjs/core'
import WebSocket from 'ws'

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
mkdirSync(`${ROOT}${process.env.DATA_DIR}`, { recursive: true })

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

const ignitor = new Ignitor(APP_ROOT, {
  importer: (filePath: string) =>
    filePath.startsWith('./') || filePath.startsWith('../')
      ? import(new URL(filePath, APP_ROOT).href)
      : import(filePath),
})
const app = ignitor.createApp('console')
app.booting(async () => {
  await import('#start/env')
})
await app.init()
await app.boot()

const { default: db } = await import('@adonisjs/lucid/services/db')
const { default: users } = await import('#core/services/users')
const { generateKey, hashKey } = await import('#core/auth/keys')
const { dbTimestamp } = await import('#core/db_time')
const { NO_RESTRICTIONS } = await import('#models/api_session')
const { default: User } = await import('#models/user')
const bookService = await app.container.make('books.books')

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
const log = createWriteStream(`${ROOT}${process.env.DATA_DIR}/server.log`)
const server = spawn(
  process.execPath,
  ['--import=ts-node-maintained/register/esm', 'bin/server.ts'],
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
  if (server.exitCode !== null)
    throw new Error(`server exited; see ${process.env.DATA_DIR}/server.log`)
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
type Listener = (frame: Record<string, any>) => void
interface Client {
  ws: WebSocket
  session: (typeof sessions)[number]
  listeners: Set<Listener>
  send(frame: Record<string, unknown>): void
}

function open(session: (typeof sessions)[number]): Promise<Client> {
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

await sleep(1000)
const rssBefore = rssOf()
const clients: Client[] = []
const startedAt = performance.now()
for (let start = 0; start < SOCKETS; start += 100) {
  clients.push(
    ...(await Promise.all(sessions.slice(start, Math.min(SOCKETS, start + 100)).map(open)))
  )
}
report(
  `sockets: ${clients.length} attached in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`
)
await sleep(2000)
const rssAfter = rssOf()
report(
  `memory: server RSS ${(rssBefore / 1048576).toFixed(0)} MiB -> ${(rssAfter / 1048576).toFixed(0)} MiB with ${clients.length} idle sockets: ${((rssAfter - rssBefore) / clients.length / 1024).toFixed(1)} KiB per idle socket`
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
const members = clients.slice(1, MEMBERS)
const fanout: number[] = []
const roundMax: number[] = []
const acks: number[] = []
for (let round = 0; round < FANOUT_ROUNDS; round++) {
  const uuid = randomUUID()
  const latencies: number[] = []
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`fan-out round ${round}: ${latencies.length}/${members.length} received`)),
      10_000
    )
    for (const member of members) {
      const listener: Listener = (frame) => {
        if (frame.type !== 1 || frame.uuid !== uuid) return
        member.listeners.delete(listener)
        latencies.push(performance.now() - sentAt)
        if (latencies.length === members.length) {
          clearTimeout(timer)
          resolve()
        }
      }
      member.listeners.add(listener)
    }
  })
  const ackListener: Listener = (frame) => {
    if (frame.type === 2 && frame.uuid === uuid) {
      owner.listeners.delete(ackListener)
      acks.push(performance.now() - sentAt)
    }
  }
  owner.listeners.add(ackListener)
  const sentAt = performance.now()
  owner.send({
    type: 1,
    uuid,
    smid: 0,
    del: false,
    msg: `fan-out round ${round}`,
    b_o: 'bench0',
    b_c: 'bigbook',
  })
  await done
  // Round 0 warms up (lazy-loaded handlers, JIT): reported apart.
  if (round === 0) report(`fan-out warm-up round: max ${ms(Math.max(...latencies))}`)
  else fanout.push(...latencies)
  roundMax.push(Math.max(...latencies))
  await sleep(300)
}
report(
  `fan-out: ${FANOUT_ROUNDS - 1} messages to a book of ${MEMBERS} connected members (${fanout.length} deliveries): ` +
    `send->receipt p50 ${ms(percentile(fanout, 50))}, p99 ${ms(percentile(fanout, 99))}, max ${ms(Math.max(...fanout))}; ` +
    `sender ack p50 ${ms(percentile(acks, 50))}`
)

// ---- send -> ack under a steady rate -----------------------------------------------------------
const senderClients =
  clients.length >= MEMBERS + SENDERS
    ? clients.slice(MEMBERS, MEMBERS + SENDERS)
    : await Promise.all(senders.map(open))
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
report(
  `send->ack: ${sent} messages in ${elapsed.toFixed(1)} s (${(sent / elapsed).toFixed(0)} msg/s, ${senderClients.length} senders): ` +
    `p50 ${ms(percentile(ackLatencies, 50))}, p90 ${ms(percentile(ackLatencies, 90))}, p99 ${ms(percentile(ackLatencies, 99))}; ` +
    `${failures} refused, ${pending.size} unanswered`
)

const fanoutOk = percentile(fanout, 99) <= 200
const ackOk = percentile(ackLatencies, 50) <= 5
report(
  `targets: fan-out p99 <= 200 ms ${fanoutOk ? 'MET' : 'MISSED'}; send->ack p50 <= 5 ms at ${RATE} msg/s ${ackOk ? 'MET' : 'MISSED'}`
)

for (const client of clients) client.ws.terminate()
stopServer()
console.log('\nFigures:\n' + figures.map((line) => `  ${line}`).join('\n'))
process.exit(0)
