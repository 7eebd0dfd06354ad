/**
 * npm run bench:books — a book of 1,000,000 messages and a user in 500 books,
 * measured over HTTP against the compiled server (as `npm start` serves it).
 *
 * Targets (issue 3), on this machine:
 *   getBookMessages, the 50 newest and a page deep in the past: p50 <= 5 ms, p99 <= 20 ms
 *   getAllBooks for 500 books: <= 50 ms
 *   sendMsg at concurrency 16 over HTTP on MariaDB: >= 1,000 messages/s sustained
 *   (issue 23 raised it: >= 3,000 messages/s on MariaDB + Redis)
 *
 *   DB_CONNECTION=mysql DB_HOST=127.0.0.1 DB_USER=root DB_PASSWORD= DB_DATABASE=quire_bench_books \
 *     REDIS_HOST=127.0.0.1 npm run bench:books
 *   npm run bench:books                               # SQLite in tmp/bench-books
 *   BENCH_MESSAGES=100000 npm run bench:books         # a smaller run
 *
 * Settings: BENCH_MESSAGES (1,000,000 in the big book), BENCH_BOOKS (500),
 * BENCH_MESSAGES_PER_BOOK (20 in each other book), BENCH_SAMPLES (1,000 timed
 * reads per figure), BENCH_DURATION (sendMsg load, 15 s), BENCH_CONNECTIONS (16),
 * BENCH_BUILD_DIR (the compiled build, tmp/bench-build), BENCH_NODE_OPTIONS (node flags for it),
 * BENCH_ONLY=send (only the sendMsg load over HTTP: no timed reads, no in-process services, no
 * getUserInfo; to profile or compare sends quickly), BENCH_SEND_WARMUP (seconds of unmeasured
 * sendMsg load before the measured one, 3), BENCH_BEFORE_SERVER (another build's bin/server.js,
 * made with its own `node bin/start.js --build-only`: its sendMsg is measured on the same database
 * in alternating rounds with this build's, BENCH_ROUNDS of them (3), each server warmed up first;
 * a before/after comparison under the same load), BENCH_ROUNDS (1 without BENCH_BEFORE_SERVER).
 * The database is migrated fresh (migration:fresh) before seeding; BENCH_REUSE=1
 * measures an already seeded database again.
 */
import 'reflect-metadata'
import { mkdirSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import cliProgress from 'cli-progress'
import { ROOT, ace, benchEnv, buildCompiled, signIn, startQuire } from './lib/quire_process.js'
import { bootSeedingApp } from './lib/seeding_app.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000)
const BOOKS = Number(process.env.BENCH_BOOKS ?? 500)
const PER_BOOK = Number(process.env.BENCH_MESSAGES_PER_BOOK ?? 20)
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 1000)
const DURATION = Number(process.env.BENCH_DURATION ?? 15)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)
const PASSWORD = 'bench-password'
const ONLY_SEND = process.env.BENCH_ONLY === 'send'
const SEND_WARMUP = Number(process.env.BENCH_SEND_WARMUP ?? 3)
const BEFORE = process.env.BENCH_BEFORE_SERVER
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (BEFORE ? 3 : 1))

// Absolute: a build elsewhere (BENCH_BEFORE_SERVER) resolves a relative data folder from its own root.
const env = benchEnv({ DATA_DIR: resolvePath(process.env.DATA_DIR ?? 'tmp/bench-books') })
mkdirSync(env.DATA_DIR!, { recursive: true })
// The seeding below runs in this process against the same database as the server.
Object.assign(process.env, env, { NODE_ENV: 'development' })
console.log(
  `\nbench:books on ${env.DB_CONNECTION ?? 'sqlite'}${env.REDIS_HOST ? ' + redis' : ''}: ` +
    `${MESSAGES.toLocaleString('en')} messages in one book, a user in ${BOOKS} books\n`
)
// BENCH_REUSE=1 measures an already seeded database again (no migration, no seeding).
const REUSE = process.env.BENCH_REUSE === '1'
if (!REUSE) ace(env, 'migration:fresh', '--force')

// ---- seeding: bulk inserts in this process ----------------------------------
const appRoot = new URL(`file://${ROOT}`)
const app = await bootSeedingApp(appRoot)

const { default: db } = await import('@adonisjs/lucid/services/db')
const { UserService } = await import('#core/services/user_service')
const users = await app.container.make(UserService)
const dialect = db.connection().dialect.name
// SQLite inserts many rows as one compound SELECT, limited to 500 terms.
const BATCH = dialect === 'mysql' ? 2000 : 400

async function seed() {
  const user = await users.create({
    code: 'benchuser',
    email: 'bench@bench.local',
    password: PASSWORD,
    firstName: 'Bench',
    lastName: 'User',
  })
  const peer = await users.create({
    code: 'benchpeer',
    email: 'peer@bench.local',
    password: PASSWORD,
    firstName: 'Bench',
    lastName: 'Peer',
  })

  /** Stamps below the clock: the server's allocator hands out later ones. */
  let stamp = (Date.now() - 86_400_000) * 10
  const nextStamp = () => ++stamp
  const now = new Date()
  const unix = Math.floor(Date.now() / 1000) - 86_400

  const bookRows = Array.from({ length: BOOKS }, (_, index) => ({
    owner_id: index % 2 === 0 ? user.id : peer.id,
    code: index === 0 ? 'big' : `b${String(index).padStart(4, '0')}`,
    description: '',
    owner_prefs: JSON.stringify({ title: index === 0 ? 'The big book' : `Book ${index}` }),
    archived: false,
    del: false,
    last_media: 0,
    nb_msgs: 0,
    counted_until: 0,
    sstamp: nextStamp(),
    created_at: now,
    updated_at: now,
  }))
  for (let start = 0; start < bookRows.length; start += BATCH) {
    await db.table('books').multiInsert(bookRows.slice(start, start + BATCH))
  }
  const books = await db.from('books').orderBy('id').select('id', 'code', 'owner_id')
  const bigBook = books[0]
  const members = books.flatMap((entry) =>
    [user, peer].map((member) => ({
      book_id: entry.id,
      user_id: member.id,
      invite: 'accepted',
      right: member.id === entry.owner_id ? 4 : 3,
      user_prefs: '{}',
      favorite: false,
      sort_order: 0,
      last_msg_read: 0,
      nb_not_read: 0,
      del: false,
      sstamp: nextStamp(),
      created_at: now,
      updated_at: now,
    }))
  )
  for (let start = 0; start < members.length; start += BATCH) {
    await db.table('book_members').multiInsert(members.slice(start, start + BATCH))
  }
  await db.table('book_contacts').multiInsert([
    { user_id: user.id, contact_id: peer.id, is_confirmed: true, sstamp: nextStamp() },
    { user_id: peer.id, contact_id: user.id, is_confirmed: true, sstamp: nextStamp() },
  ])

  const total = MESSAGES + (BOOKS - 1) * PER_BOOK
  const bar = new cliProgress.SingleBar(
    {
      format: 'seeding messages [{bar}] {percentage}% | {value}/{total} | {duration}s',
      // Also report progress when the output is a log file, not a terminal.
      noTTYOutput: true,
      notTTYSchedule: 5000,
    },
    cliProgress.Presets.shades_classic
  )
  bar.start(total, 0)
  let sequence = 0
  const message = (bookId: number) => {
    sequence++
    const messageStamp = nextStamp()
    return {
      book_id: bookId,
      uuid: `seed-${sequence}`,
      creator_id: sequence % 2 === 0 ? user.id : peer.id,
      pid: 0,
      msg: `Message ${sequence}: the quick brown fox jumps over the lazy dog`,
      msg_type: 'm',
      msg_method: '',
      msg_color: '',
      nb_comments: 0,
      last_comment_id: 0,
      nb_medias: 0,
      nb_email_cids: 0,
      nb_docs: 0,
      has_event: false,
      del: false,
      created: unix + Math.floor(sequence / 100),
      last_modified: unix + Math.floor(sequence / 100),
      cstamp: messageStamp,
      sstamp: messageStamp,
    }
  }
  const insertMessages = async (bookId: number, count: number) => {
    for (let done = 0; done < count;) {
      const size = Math.min(BATCH * 10, count - done)
      await db.transaction(async (trx) => {
        for (let offset = 0; offset < size; offset += BATCH) {
          const rows = Array.from({ length: Math.min(BATCH, size - offset) }, () => message(bookId))
          await trx.table('book_messages').multiInsert(rows)
        }
      })
      done += size
      bar.increment(size)
    }
  }
  await insertMessages(bigBook.id, MESSAGES)
  for (const entry of books.slice(1)) await insertMessages(entry.id, PER_BOOK)
  bar.stop()

  // Counters as a refresh would leave them; the user has read all but the last 10 of each book.
  await db.rawQuery(
    `UPDATE books SET counted_until = ?, nb_msgs = (SELECT COUNT(*) FROM book_messages m WHERE m.book_id = books.id AND m.del = ?)`,
    [stamp, false]
  )
  await db.rawQuery(
    `UPDATE book_members SET last_msg_read = (SELECT MAX(smid) - 10 FROM book_messages m WHERE m.book_id = book_members.book_id)`
  )
  await db.rawQuery(
    `UPDATE book_members SET nb_not_read = (SELECT COUNT(*) FROM book_messages m WHERE m.book_id = book_members.book_id
       AND m.smid > book_members.last_msg_read AND m.creator_id <> book_members.user_id AND m.del = ?)`,
    [false]
  )
  if (dialect === 'mysql') await db.rawQuery('ANALYZE TABLE book_messages, books, book_members')
}

if (!REUSE) await seed()
const bigBook = await db.from('books').where('code', 'big').firstOrFail()
const bounds = await db
  .from('book_messages')
  .where('book_id', bigBook.id)
  .min('smid as oldest')
  .max('smid as newest')
  .first()

// ---- the books services alone (in this process, no HTTP, no session check) ----
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
const serviceFigures = ONLY_SEND
  ? null
  : await (async () => {
      const { BookAccessService } = await import('#plugins/books/services/book_access_service')
      const { MessageService } = await import('#plugins/books/services/message_service')
      const { MessageQueries } = await import('#plugins/books/services/message_queries')
      const { BookService } = await import('#plugins/books/services/book_service')
      const bookAccess = await app.container.make(BookAccessService)
      const messages = await app.container.make(MessageService)
      const queries = await app.container.make(MessageQueries)
      const books = await app.container.make(BookService)
      const { default: User } = await import('#models/user')
      const { NO_RESTRICTIONS } = await import('#models/api_session')
      const benchUser = await User.findByOrFail('code', 'benchuser')
      const actor = {
        user: benchUser,
        principal: benchUser,
        session: null as any,
        restrictions: { ...NO_RESTRICTIONS },
        onBehalf: false,
      }
      const sample = async (work: () => Promise<unknown>, count = Math.min(SAMPLES, 300)) => {
        for (let index = 0; index < 20; index++) await work()
        const samples: number[] = []
        for (let index = 0; index < count; index++) {
          const started = performance.now()
          await work()
          samples.push(performance.now() - started)
        }
        samples.sort((a, b) => a - b)
        return { p50: percentile(samples, 50), p99: percentile(samples, 99) }
      }
      const page = await sample(async () =>
        queries.list(await bookAccess.resolveFor(actor, 'benchuser', 'big', 'read'), {})
      )
      const listing = await sample(() => books.listFor(actor, {}), 50)
      const total = 2000
      let started = 0
      const begin = performance.now()
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (started < total) {
            started++
            await messages.send(actor, { b_o: 'benchuser', b_c: 'big', msg: 'sent in process' })
          }
        })
      )
      const sends = total / ((performance.now() - begin) / 1000)
      return { page, listing, sends }
    })()
await app.terminate()

// ---- measuring over HTTP -------------------------------------------------------
// The compiled build, as `npm start` serves it (no TypeScript loader in the serving process).
const quire = await startQuire(env, { compiled: buildCompiled() })
const before = BEFORE ? await startQuire(env, { compiled: BEFORE }) : null

try {
  const session = await signIn(quire.url, 'bench@bench.local', PASSWORD)
  const base = {
    version: '6.49q/6.49',
    o_u: session.o_u,
    u_c: session.o_u,
    sesskey: session.sesskey,
  }
  const endpoint = (params: Record<string, string | number>) =>
    `${quire.url}/live/api.php?${new URLSearchParams(
      Object.entries({ ...base, ...params }).map(([key, value]): [string, string] => [
        key,
        String(value),
      ])
    )}`

  /** Sequential timed GETs (one connection, kept alive): latency without queueing. */
  const timed = async (
    name: string,
    params: Record<string, string | number>,
    check: (body: any) => void,
    rawUrl?: string
  ) => {
    const url = rawUrl ?? endpoint(params)
    const first = await fetch(url)
    const probe = JSON.parse((await first.text()) || '{}') as Record<string, any>
    if (probe.status !== 'ok' && !rawUrl)
      throw new Error(`${name}: ${JSON.stringify(probe).slice(0, 300)}`)
    check(probe)
    for (let index = 0; index < 50; index++) {
      const warmup = await fetch(url)
      await warmup.arrayBuffer()
    }
    const samples: number[] = []
    for (let index = 0; index < SAMPLES; index++) {
      const started = performance.now()
      const response = await fetch(url)
      await response.arrayBuffer()
      samples.push(performance.now() - started)
    }
    samples.sort((a, b) => a - b)
    return { name, p50: percentile(samples, 50), p99: percentile(samples, 99) }
  }

  const expectMessages = (count: number) => (body: any) => {
    if (body.bookMessages.length !== count)
      throw new Error(`expected ${count} messages, got ${body.bookMessages.length}`)
  }
  const inBigBook = Number(bounds.newest) - Number(bounds.oldest) + 1
  const deepSmid = Number(bounds.oldest) + Math.floor(inBigBook / 10)
  const big = { b_o: 'benchuser', b_c: 'big' }
  // An offset page is linear in its depth; keyset paging (smidLast) is how clients scroll back.
  const DEEP_PAGE = Math.min(1000, Math.floor(inBigBook / 100))
  const reads = ONLY_SEND
    ? []
    : [
        await timed(
          'getBookMessages, 50 newest',
          { req: 'getBookMessages', ...big },
          expectMessages(50)
        ),
        await timed(
          `getBookMessages, 50 before smidLast (${(Number(bounds.newest) - deepSmid).toLocaleString('en')} back)`,
          { req: 'getBookMessages', ...big, smidLast: deepSmid },
          expectMessages(50)
        ),
        await timed(
          `getBookMessages, page ${DEEP_PAGE.toLocaleString('en')} (offset ${((DEEP_PAGE - 1) * 50).toLocaleString('en')})`,
          { req: 'getBookMessages', ...big, page: DEEP_PAGE },
          expectMessages(50)
        ),
        await timed(`getAllBooks, ${BOOKS} books`, { req: 'getAllBooks' }, (body) => {
          if (body.allBooks.books.length !== BOOKS)
            throw new Error(`expected ${BOOKS} books, got ${body.allBooks.books.length}`)
        }),
      ]

  // sendMsg: every connection sends new messages into the big book.
  const countMessages = async () => {
    const response = await fetch(endpoint({ req: 'getAllBooks', b_c: 'big' }))
    const body = (await response.json()) as any
    return Number(body.allBooks.books[0].nbMsgs)
  }
  const form = new URLSearchParams({
    ...base,
    req: 'sendMsg',
    ...big,
    msg: 'a message sent under load',
  }).toString()
  /**
   * One measured sendMsg load on `server`: messages stored (counted by the book, not by answers),
   * the rate, latency and the server's CPU per stored message. A short unmeasured load first when
   * `warmup`: a fresh server compiles the send path's code during its first seconds, CPU that
   * would otherwise count against the measured messages.
   */
  const sendLoad = async (server: typeof quire, warmup: boolean) => {
    const url = `${server.url}/live/api.php`
    const headers = { 'content-type': 'application/x-www-form-urlencoded' }
    if (warmup && SEND_WARMUP > 0) {
      await autocannon({
        url,
        method: 'POST',
        headers,
        body: form,
        connections: CONNECTIONS,
        duration: SEND_WARMUP,
      })
    }
    const countBefore = await countMessages()
    let nok = 0
    // Server CPU per stored message: what a loaded, shared machine changes least (a rate swings).
    const cpuBefore = server.cpuMs()
    const result = await autocannon({
      url,
      method: 'POST',
      headers,
      body: form,
      connections: CONNECTIONS,
      duration: DURATION,
      setupClient: (client: any) => {
        client.on('body', (body: Buffer) => {
          if (!body.includes('"status":"ok"')) nok++
        })
      },
    })
    const cpuMs = server.cpuMs() - cpuBefore
    const stored = (await countMessages()) - countBefore
    return { result, nok, stored, perSecond: stored / DURATION, cpuMs }
  }
  type SendFigures = Awaited<ReturnType<typeof sendLoad>>
  const describe = ({ result, nok, stored, perSecond, cpuMs }: SendFigures) =>
    `${Math.round(perSecond).toLocaleString('en')} messages/s stored ` +
    `(${stored.toLocaleString('en')} messages; latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; ` +
    `${nok} nok answers, ${result.errors} errors, ${result.non2xx} non-2xx; ` +
    `server CPU ${(cpuMs / Math.max(1, stored)).toFixed(3)} ms a message)`

  // Rounds alternate the builds (BENCH_BEFORE_SERVER's first in odd rounds), so a change of the
  // machine's load falls on both; each server's first round is warmed up.
  const mine: SendFigures[] = []
  const theirs: SendFigures[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const order: [typeof quire, SendFigures[], string][] = [[quire, mine, 'this build']]
    if (before) order[round % 2 === 0 ? 'push' : 'unshift']([before, theirs, 'before'])
    for (const [server, figures, name] of order) {
      const figure = await sendLoad(server, round === 0)
      figures.push(figure)
      if (ROUNDS > 1) console.log(`  round ${round + 1}, ${name}: ${describe(figure)}`)
    }
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    return sorted[Math.floor((sorted.length - 1) / 2)]
  }
  /** The round of median rate: its figures are what the lines below print. */
  const medianRound = (figures: SendFigures[]) => {
    const rate = median(figures.map((figure) => figure.perSecond))
    return figures.find((figure) => figure.perSecond === rate)!
  }
  const cpuPerMessage = (figures: SendFigures[]) =>
    median(figures.map((figure) => figure.cpuMs / Math.max(1, figure.stored)))
  const { result: load, nok, stored, perSecond } = medianRound(mine)
  const sendCpuMs = cpuPerMessage(mine) * Math.max(1, stored)
  if (before) {
    console.log(
      `\n  BENCH_BEFORE_SERVER, median of ${ROUNDS} rounds: ${describe(medianRound(theirs))}; ` +
        `median server CPU ${cpuPerMessage(theirs).toFixed(3)} ms a message`
    )
  }

  // getUserInfo at the same concurrency: the session check and the user's info, whose nbBooks
  // counts the bench user's memberships (BENCH_BOOKS of them) on each call; not a kernel floor.
  const userInfo = ONLY_SEND
    ? null
    : await autocannon({
        url: endpoint({ req: 'getUserInfo' }),
        connections: CONNECTIONS,
        duration: Math.max(3, Math.round(DURATION / 3)),
      })
  const health = ONLY_SEND
    ? null
    : await timed('GET /health (no api.php, the HTTP floor)', {}, () => {}, `${quire.url}/health`)

  const sendLine =
    `  sendMsg at ${CONNECTIONS} connections for ${DURATION} s${ROUNDS > 1 ? ` (median of ${ROUNDS} rounds; CPU: median of the rounds)` : ''}: ${Math.round(perSecond).toLocaleString('en')} messages/s stored ` +
    `(${stored.toLocaleString('en')} messages; latency p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms; ` +
    `${nok} nok answers, ${load.errors} errors, ${load.non2xx} non-2xx; ` +
    `server CPU ${(sendCpuMs / Math.max(1, stored)).toFixed(3)} ms a message)`
  if (!userInfo || !health || !serviceFigures) {
    console.log(`\n${sendLine}`)
  } else {
    console.log('\nfigures (ms; sequential requests, keep-alive, one client):')
    for (const read of [...reads, health]) {
      console.log(
        `  ${read.name.padEnd(62)} p50 ${read.p50.toFixed(2).padStart(7)}  p99 ${read.p99.toFixed(2).padStart(7)}`
      )
    }
    console.log(`\n${sendLine}`)
    console.log(
      `  getUserInfo at ${CONNECTIONS} connections (a member of ${BOOKS} books: nbBooks counted each call): ${Math.round(userInfo.requests.average).toLocaleString('en')} requests/s`
    )
    console.log('\nthe books services alone (in process: no HTTP, no session check):')
    console.log(
      `  resolveFor + list, 50 newest: p50 ${serviceFigures.page.p50.toFixed(2)} ms, p99 ${serviceFigures.page.p99.toFixed(2)} ms`
    )
    console.log(
      `  listFor, ${BOOKS} books: p50 ${serviceFigures.listing.p50.toFixed(2)} ms, p99 ${serviceFigures.listing.p99.toFixed(2)} ms`
    )
    console.log(
      `  MessageService.send, ${CONNECTIONS} concurrent: ${Math.round(serviceFigures.sends)} messages/s`
    )
  }
  const [newest, deep, , allBooks] = reads
  const verdicts = [
    ...(newest && deep && allBooks
      ? ([
          ['getBookMessages newest p50 <= 5 / p99 <= 20', newest.p50 <= 5 && newest.p99 <= 20],
          ['getBookMessages deep p50 <= 5 / p99 <= 20', deep.p50 <= 5 && deep.p99 <= 20],
          [`getAllBooks (${BOOKS} books) <= 50 ms (p50)`, allBooks.p50 <= 50],
        ] as const)
      : []),
    ['sendMsg >= 1,000 messages/s (on MariaDB)', perSecond >= 1000] as const,
    ['sendMsg >= 3,000 messages/s (on MariaDB + Redis, issue 23)', perSecond >= 3000] as const,
  ]
  console.log('\ntargets:')
  for (const [label, ok] of verdicts) console.log(`  ${ok ? 'met    ' : 'MISSED '} ${label}`)
} finally {
  await Promise.all([quire.stop(), before?.stop()])
}
