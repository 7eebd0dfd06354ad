/**
 * npm run bench:gateways — the gateways plugin's deliveries, measured over
 * HTTP against a real Quire server (the compiled build), every provider a local
 * fake on 127.0.0.1.
 *
 * Targets (issue 19 item 11), on this machine:
 *   a message to a book of 1,000 members with a device each: every push handed
 *     to the (fake) FCM provider within 2 s of the message's commit; p50 / p99
 *   sendMsg's rate with e-mail copies on within 10 % of its rate with them off
 *     (the copies are written with the message and sent after: never in its way)
 *   10,000 inbound e-mails ingested (the relay webhook, POST /gateways/mail/inbound): rate
 *
 *   BENCH_MEMBERS=1000 BENCH_MAILS=10000 npm run bench:gateways        # the issue's sizes
 *   npm run bench:gateways                                           # small, under a minute
 *   DB_CONNECTION=mysql DB_HOST=127.0.0.1 DB_USER=root DB_PASSWORD= DB_DATABASE=quire_bench_gateways \
 *     REDIS_HOST=127.0.0.1 npm run bench:gateways
 *
 * Settings: BENCH_MEMBERS (200 members with an Android device in the push
 * book), BENCH_ROUNDS (3 messages to it, one after the other), BENCH_COPY_MEMBERS
 * (5 members asking for e-mail copies), BENCH_SLICES (3 pairs of copies-on /
 * copies-off sendMsg loads, interleaved), BENCH_SLICE_SECONDS (3),
 * BENCH_CONNECTIONS (8), BENCH_MAILS (500 inbound e-mails). The database is
 * migrated fresh before seeding. The outbox's job concurrency is the server's
 * QUEUE_CONCURRENCY (5 by default), as deployed.
 */
import 'reflect-metadata'
import { createHash, randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { SMTPServer } from 'smtp-server'
import { ROOT, ace, benchEnv, buildCompiled, signIn, startQuire } from './lib/quire_process.js'
import { startFakeFcm } from '../plugins/gateways/tests/helpers/push_fakes.js'
import { bootSeedingApp } from './lib/seeding_app.js'

const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 200)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const COPY_MEMBERS = Number(process.env.BENCH_COPY_MEMBERS ?? 5)
const SLICES = Number(process.env.BENCH_SLICES ?? 3)
const SLICE_SECONDS = Number(process.env.BENCH_SLICE_SECONDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const MAILS = Number(process.env.BENCH_MAILS ?? 500)
const PASSWORD = 'bench-password'
const MAIL_DOMAIN = 'bench.local'
const INBOUND_TOKEN = randomBytes(24).toString('hex')
/** How long a round may take before the bench gives up on it (a broken run, not a figure). */
const ROUND_LIMIT_MS = 120_000

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---- local fakes: FCM (OAuth token endpoint + send) and an SMTP sink ----------
const fcm = await startFakeFcm()
/** When each accepted push reached the fake, by message (smid). */
const receipts = new Map<string, number[]>()
const accepted: Record<string, any>[] = []
accepted.push = (...messages: Record<string, any>[]) => {
  const now = performance.now()
  for (const message of messages) {
    const smid = String(message.data?.smid)
    receipts.set(smid, [...(receipts.get(smid) ?? []), now])
  }
  return Array.prototype.push.apply(accepted, messages)
}
fcm.received = accepted

let mailsReceived = 0
const sink = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {})
    stream.on('end', () => {
      mailsReceived++
      callback()
    })
  },
})
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
const sinkPort = (sink.server.address() as AddressInfo).port

const env = benchEnv({
  DATA_DIR: process.env.DATA_DIR ?? 'tmp/bench-gateways',
  GATEWAYS_FCM_SERVICE_ACCOUNT: fcm.serviceAccount,
  GATEWAYS_FCM_BASE_URL: fcm.url,
  GATEWAYS_SMTP_HOST: '127.0.0.1',
  GATEWAYS_SMTP_PORT: String(sinkPort),
  GATEWAYS_MAIL_FROM: 'Quire bench <quire@bench.local>',
  MAIL_DOMAIN,
  GATEWAYS_MAIL_INBOUND_TOKEN: INBOUND_TOKEN,
  // The bench's one sender would otherwise meet the per-sender limits at once.
  GATEWAYS_MAIL_RATE_PER_SENDER: '100000000',
})
mkdirSync(env.DATA_DIR!, { recursive: true })
Object.assign(process.env, env, { NODE_ENV: 'development' })
console.log(
  `\nbench:gateways on ${env.DB_CONNECTION ?? 'sqlite'}${env.REDIS_HOST ? ' + redis' : ''}: ` +
    `${MEMBERS.toLocaleString('en')} members with devices, ${COPY_MEMBERS} asking for e-mail copies, ` +
    `${MAILS.toLocaleString('en')} inbound e-mails\n`
)
ace(env, 'migration:fresh', '--force')

// ---- seeding: bulk inserts in this process ------------------------------------
const appRoot = new URL(`file://${ROOT}`)
const app = await bootSeedingApp(appRoot)
const { default: db } = await import('@adonisjs/lucid/services/db')
const { UserService } = await import('#core/services/user_service')
const users = await app.container.make(UserService)
const BATCH = db.connection().dialect.name === 'mysql' ? 1000 : 200

async function seed() {
  const owner = await users.create({
    code: 'benchowner',
    email: 'owner@bench.local',
    password: PASSWORD,
    firstName: 'Bench',
    lastName: 'Owner',
  })
  // Every member shares the owner's password hash: hashing a thousand passwords is not the point.
  const ownerRow = await db.from('users').where('id', owner.id).select('password').first()
  const hash = ownerRow.password
  const now = new Date()
  let stamp = (Date.now() - 86_400_000) * 10
  const people = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, index) => ({
      code: `${prefix}${String(index).padStart(5, '0')}`,
      email: `${prefix}${index}@bench.local`,
      password: hash,
      first_name: 'Bench',
      last_name: `${prefix} ${index}`,
      sstamp: ++stamp,
      created_at: now,
      updated_at: now,
    }))
  const insert = async (table: string, rows: Record<string, unknown>[]) => {
    for (let start = 0; start < rows.length; start += BATCH)
      await db.table(table).multiInsert(rows.slice(start, start + BATCH))
  }
  await insert('users', [...people('push', MEMBERS), ...people('copy', COPY_MEMBERS)])
  const ids = async (prefix: string) => {
    const rows = await db
      .from('users')
      .where('code', 'like', `${prefix}%`)
      .orderBy('id')
      .select('id')
    return rows.map((row) => Number(row.id))
  }
  const pushIds = await ids('push')
  const copyIds = await ids('copy')
  const book = (code: string, title: string) => ({
    owner_id: owner.id,
    code,
    description: '',
    owner_prefs: JSON.stringify({ title }),
    archived: false,
    del: false,
    last_media: 0,
    nb_msgs: 0,
    counted_until: 0,
    sstamp: ++stamp,
    created_at: now,
    updated_at: now,
  })
  await insert('books', [
    book('push', 'A thousand phones'),
    book('copieson', 'Copies by e-mail'),
    book('copiesoff', 'No copies'),
  ])
  const bookId = async (code: string) => {
    const row = await db.from('books').where('code', code).select('id').first()
    return Number(row.id)
  }
  const member = (bookIdOf: number, userId: number, prefs: Record<string, unknown>) => ({
    book_id: bookIdOf,
    user_id: userId,
    invite: 'accepted',
    right: userId === owner.id ? 4 : 2,
    user_prefs: JSON.stringify(prefs),
    favorite: false,
    sort_order: 0,
    last_msg_read: 0,
    nb_not_read: 0,
    del: false,
    sstamp: ++stamp,
    created_at: now,
    updated_at: now,
  })
  const [push, copiesOn, copiesOff] = [
    await bookId('push'),
    await bookId('copieson'),
    await bookId('copiesoff'),
  ]
  await insert('book_members', [
    ...[owner.id, ...pushIds].map((id) => member(push, id, {})),
    ...[owner.id, ...copyIds].map((id) =>
      member(copiesOn, id, id === owner.id ? {} : { notifyEmailCopy: true })
    ),
    ...[owner.id, ...copyIds].map((id) => member(copiesOff, id, {})),
  ])
  await insert(
    'gateways_push_devices',
    pushIds.map((userId) => {
      const token = `${randomBytes(11).toString('base64url')}:APA91b${randomBytes(100).toString('base64url')}`
      return {
        user_id: userId,
        device_type: 'gcm_rid',
        registration_id: token,
        registration_hash: createHash('sha256').update(token).digest('hex'),
        active: true,
        project_id: 0,
        created_at: now,
        updated_at: now,
      }
    })
  )
}
await seed()
await app.terminate()

// ---- measuring over HTTP -------------------------------------------------------
// The production build, as `npm start` serves it (no TypeScript loader in the server).
const quire = await startQuire(env, { compiled: buildCompiled() })
try {
  const session = await signIn(quire.url, 'owner@bench.local', PASSWORD)
  const base = { o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey }
  const api = async (params: Record<string, string>) => {
    const response = await fetch(`${quire.url}/live/api.php`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...base, ...params }).toString(),
    })
    const body = (await response.json()) as Record<string, any>
    if (body.status !== 'ok') throw new Error(`${params.req}: ${JSON.stringify(body)}`)
    return body
  }

  // 1. Push: one message to the book of MEMBERS devices, ROUNDS times.
  const fromAnswer: number[] = []
  const fromRequest: number[] = []
  const lastOfRound: number[] = []
  await api({ req: 'sendMsg', b_o: 'benchowner', b_c: 'push', msg: 'warm-up' })
  await waitForReceipts(null, MEMBERS)
  for (let round = 1; round <= ROUNDS; round++) {
    const asked = performance.now()
    const sent = await api({
      req: 'sendMsg',
      b_o: 'benchowner',
      b_c: 'push',
      msg: `round ${round}: a message for everyone`,
    })
    const answered = performance.now()
    const times = await waitForReceipts(String(sent.createMessageId), MEMBERS)
    for (const time of times) {
      fromAnswer.push(time - answered)
      fromRequest.push(time - asked)
    }
    lastOfRound.push(Math.max(...times) - answered)
    await sleep(300)
  }
  fromAnswer.sort((a, b) => a - b)
  fromRequest.sort((a, b) => a - b)

  // 2. sendMsg with e-mail copies on and off, interleaved slices of the same load.
  /** Messages stored in a book (getAllBooks' nbMsgs): what a load really wrote, not what it was told. */
  const storedIn = async (book: string) => {
    const body = await api({ req: 'getAllBooks', b_c: book })
    return Number(body.allBooks.books[0].nbMsgs)
  }
  const load = async (book: string) => {
    const before = await storedIn(book)
    const result = await autocannon({
      url: `${quire.url}/live/api.php`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...base,
        req: 'sendMsg',
        b_o: 'benchowner',
        b_c: book,
        msg: 'a message under load',
      }).toString(),
      connections: CONNECTIONS,
      duration: SLICE_SECONDS,
    })
    return {
      ok: (await storedIn(book)) - before,
      seconds: result.duration,
      p99: result.latency.p99,
    }
  }
  const totals = { on: { ok: 0, seconds: 0, p99: 0 }, off: { ok: 0, seconds: 0, p99: 0 } }
  /** Seconds the copies of every copies-on slice took to reach the sink after it ended. */
  const drains: number[] = []
  for (let slice = 0; slice < SLICES; slice++) {
    // Alternating which goes first; and each copies-on slice's copies reach the sink before the
    // next slice starts, so that no slice is measured against another's backlog.
    const order: ('on' | 'off')[] = slice % 2 === 0 ? ['on', 'off'] : ['off', 'on']
    for (const mode of order) {
      const result = await load(mode === 'on' ? 'copieson' : 'copiesoff')
      totals[mode].ok += result.ok
      totals[mode].seconds += result.seconds
      totals[mode].p99 = Math.max(totals[mode].p99, result.p99)
      if (mode === 'on') {
        const expected = totals.on.ok * COPY_MEMBERS
        const started = performance.now()
        while (mailsReceived < expected && performance.now() - started < 60_000) await sleep(20)
        drains.push((performance.now() - started) / 1000)
      }
    }
  }
  const rate = (mode: 'on' | 'off') => totals[mode].ok / totals[mode].seconds
  const copiesExpected = totals.on.ok * COPY_MEMBERS
  const copiesDrained = Math.max(...drains)

  // 3. Inbound e-mail through the relay webhook, CONNECTIONS at a time.
  const recipient = `copiesoff.benchowner@${MAIL_DOMAIN}`
  const raw = (index: number) =>
    [
      'From: Bench Owner <owner@bench.local>',
      `To: ${recipient}`,
      `Subject: inbound ${index}`,
      `Message-ID: <bench-${index}-${Date.now()}@bench.local>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Inbound message number ${index}: the quick brown fox jumps over the lazy dog.`,
      '',
    ].join('\r\n')
  let next = 0
  let stored = 0
  let refused = 0
  const refusals = new Map<string, number>()
  const mailStarted = performance.now()
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < MAILS) {
        const index = next++
        const response = await fetch(
          `${quire.url}/gateways/mail/inbound?recipient=${encodeURIComponent(recipient)}`,
          {
            method: 'POST',
            headers: {
              'authorization': `Bearer ${INBOUND_TOKEN}`,
              'content-type': 'message/rfc822',
            },
            body: raw(index),
          }
        )
        const body = (await response.json()) as Record<string, any>
        if (response.ok && body.status === 'stored') stored++
        else {
          refused++
          const why = String(body.error ?? body.status)
          refusals.set(why, (refusals.get(why) ?? 0) + 1)
        }
      }
    })
  )
  const mailSeconds = (performance.now() - mailStarted) / 1000

  const ms = (value: number) => `${value.toFixed(0)} ms`
  // Shared machines: the figures mean little without the load they were taken under.
  console.log(
    `load average during the run: ${loadavg()
      .map((average) => average.toFixed(1))
      .join(', ')}\n`
  )
  console.log('push: a message to a book of members with one FCM device each, to the fake provider')
  console.log(
    `  ${MEMBERS.toLocaleString('en')} devices × ${ROUNDS} messages; from sendMsg's answer (the commit is before it):`
  )
  console.log(
    `    p50 ${ms(percentile(fromAnswer, 50))}  p99 ${ms(percentile(fromAnswer, 99))}  ` +
      `last of each message ${lastOfRound.map(ms).join(', ')}  (target: all within 2,000 ms)`
  )
  console.log(
    `  from the request's start (the write included): p50 ${ms(percentile(fromRequest, 50))}  p99 ${ms(percentile(fromRequest, 99))}`
  )
  console.log(
    `  provider: ${fcm.tokensIssued} OAuth token(s) issued, ${fcm.rejected.length} request(s) refused`
  )
  console.log(
    `\nsendMsg at concurrency ${CONNECTIONS}, ${SLICES} interleaved pairs of ${SLICE_SECONDS} s slices:`
  )
  console.log(
    `  copies off: ${rate('off').toFixed(0)} messages/s (p99 ≤ ${totals.off.p99} ms)\n` +
      `  copies on (${COPY_MEMBERS} e-mails a message): ${rate('on').toFixed(0)} messages/s (p99 ≤ ${totals.on.p99} ms), ` +
      `${((rate('on') / rate('off') - 1) * 100).toFixed(1)} % (target: within 10 %)`
  )
  console.log(
    `  copies sent to the local SMTP sink: ${mailsReceived.toLocaleString('en')} of ${copiesExpected.toLocaleString('en')}` +
      ` (at most ${copiesDrained.toFixed(1)} s after a copies-on slice to drain)`
  )
  console.log(`\ninbound e-mail over the relay webhook, ${CONNECTIONS} at a time:`)
  console.log(
    `  ${stored.toLocaleString('en')} stored of ${MAILS.toLocaleString('en')} in ${mailSeconds.toFixed(1)} s: ` +
      `${(stored / mailSeconds).toFixed(0)} e-mails/s` +
      (refused
        ? `; refused ${[...refusals].map(([why, count]) => `${why} ×${count}`).join(', ')}`
        : '')
  )
} finally {
  await quire.stop()
  await fcm.close()
  await new Promise<void>((resolve) => sink.close(() => resolve()))
}

/** The receipt times of a message's pushes (null: any message's), once `count` have arrived. */
async function waitForReceipts(smid: string | null, count: number): Promise<number[]> {
  const started = performance.now()
  for (;;) {
    const times = smid === null ? [...receipts.values()].flat() : (receipts.get(smid) ?? [])
    if (times.length >= count) return times
    if (performance.now() - started > ROUND_LIMIT_MS)
      throw new Error(`only ${times.length} of ${count} pushes reached the provider`)
    await sleep(5)
  }
}
