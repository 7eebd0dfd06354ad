/**
 * bench:console — issue 22 item 9: every console page's answer time with a big database, over
 * HTTP against the compiled server (what `npm start` serves), as the browser asks for it (an
 * Inertia visit of a signed-in administrator).
 *
 * It measures a database bench:tables seeded (its 1,000,000-row table), with 100,000 messages
 * added to one book here (one INSERT ... SELECT, once):
 *
 *   npm run bench:tables                 # seeds tmp/bench-tables (1,000,000 rows)
 *   npm run bench:console                # then this, on the same DATA_DIR
 *   BENCH_ROWS=20000 npm run bench:tables && npm run bench:console   # small, under a minute
 *
 * Pages: every entry of the navigation the server builds for the administrator, a user, the
 * book holding the messages, each table's grid, and the biggest table's grid on a deep page,
 * with its row panel, sorted by an indexed and by an unindexed column, and searched. Each is
 * asked BENCH_VISITS times (11); p50 and p90 are printed against the target (<= 150 ms).
 * Settings: DATA_DIR (tmp/bench-tables), BENCH_MESSAGES (100,000), BENCH_VISITS, BENCH_BUILD_DIR,
 * BENCH_BEFORE_SERVER (another build's bin/server.js on the same database, each page visited on
 * it then on this one, alternately: a before/after in the same run).
 * SQLite only (the seeded file is read directly to add the messages).
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { ROOT, ace, benchEnv, buildCompiled, startQuire } from './lib/quire_process.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000)
const VISITS = Number(process.env.BENCH_VISITS ?? 11)
const TARGET_MS = 150
const ADMIN = {
  code: 'benchconsole',
  email: 'benchconsole@example.test',
  password: 'Bench-console-1!',
}
process.env.DATA_DIR = process.env.DATA_DIR ?? 'tmp/bench-tables'
const file = join(ROOT, process.env.DATA_DIR, 'quire.sqlite')
if (!existsSync(file)) {
  console.error(`No database in ${process.env.DATA_DIR}: run npm run bench:tables first.`)
  process.exit(1)
}

const env = benchEnv({ ADMIN_TOTP_REQUIRED: 'false' })
ace(env, 'migration:run', '--force')

// ---- data: the messages, an administrator -----------------------------------------------------
const sqlite = new Database(file)
const book = sqlite.prepare('SELECT id, owner_id FROM books ORDER BY id LIMIT 1').get() as
  { id: number; owner_id: number } | undefined
if (!book) throw new Error('bench:tables made no book')
const { count } = sqlite
  .prepare('SELECT COUNT(*) AS count FROM book_messages WHERE book_id = ?')
  .get(book.id) as { count: number }
if (count < MESSAGES) {
  const started = Date.now()
  const now = Math.floor(Date.now() / 1000)
  // Stamps 1..n: older than every stamp the server allocates.
  sqlite
    .prepare(
      `WITH RECURSIVE s(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM s WHERE n < ?)
       INSERT INTO book_messages (book_id, uuid, creator_id, msg, created, last_modified, cstamp, sstamp)
       SELECT ?, 'bench-console-' || n, ?, 'Message ' || n || ': the quick brown fox jumps over the lazy dog',
              ? - ? + n, ? - ? + n, n, n FROM s`
    )
    .run(count + 1, MESSAGES, book.id, book.owner_id, now, MESSAGES, now, MESSAGES)
  sqlite
    .prepare(
      'UPDATE books SET nb_msgs = (SELECT COUNT(*) FROM book_messages m WHERE m.book_id = books.id AND m.del = 0) WHERE id = ?'
    )
    .run(book.id)
  console.log(`${MESSAGES - count} messages added in ${Date.now() - started} ms`)
}
const admin = sqlite.prepare('SELECT id FROM users WHERE code = ?').get(ADMIN.code)
sqlite.close()
if (!admin) ace(env, 'user:create', ADMIN.code, ADMIN.email, ADMIN.password, '--admin')

// ---- the servers and a signed-in console visitor of each -----------------------------------
/**
 * BENCH_BEFORE_SERVER: the bin/server.js of another build (an earlier commit's, made with its own
 * `node bin/start.js --build-only`), started on the same database and measured page by page in
 * alternating visits with this one: a before/after comparison under the same load.
 */
const BEFORE = process.env.BENCH_BEFORE_SERVER
const server = await startQuire(env, { compiled: buildCompiled() })
// Absolute: a build elsewhere resolves a relative data folder from its own root.
const serverBefore = BEFORE
  ? await startQuire({ ...env, DATA_DIR: resolve(ROOT, env.DATA_DIR!) }, { compiled: BEFORE })
  : null

/** A signed-in administrator's Inertia visits of one server (its cookies and assets version). */
async function consoleVisitor(url: string) {
  const cookies = new Map<string, string>()
  let version = ''
  const remember = (response: Response) => {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';')
      const equals = pair.indexOf('=')
      cookies.set(pair.slice(0, equals), pair.slice(equals + 1))
    }
  }
  async function visit(path: string, body?: unknown) {
    const headers: Record<string, string> = {
      'accept': 'text/html, application/xhtml+xml',
      'cookie': [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      'x-inertia': 'true',
      'x-inertia-version': version,
      'x-requested-with': 'XMLHttpRequest',
    }
    const xsrf = cookies.get('XSRF-TOKEN')
    if (xsrf) headers['x-xsrf-token'] = decodeURIComponent(xsrf)
    if (body) headers['content-type'] = 'application/json'
    const started = performance.now()
    const response = await fetch(`${url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers,
      body: body ? JSON.stringify(body) : undefined,
      redirect: 'manual',
    })
    const text = await response.text()
    const ms = performance.now() - started
    remember(response)
    return { status: response.status, text, ms, location: response.headers.get('location') }
  }
  const login = await fetch(`${url}/admin/login`)
  remember(login)
  version = /&quot;version&quot;:&quot;([^&]*)&quot;/.exec(await login.text())?.[1] ?? ''
  const signedIn = await visit('/admin/login', { login: ADMIN.code, password: ADMIN.password })
  if (signedIn.location !== '/admin') throw new Error(`sign-in failed: ${signedIn.status}`)
  return visit
}
const visit = await consoleVisitor(server.url)
const visitBefore = serverBefore ? await consoleVisitor(serverBefore.url) : null

// ---- the pages ---------------------------------------------------------------------------------
const home = await visit('/admin')
const dashboard = JSON.parse(home.text)
const paths = new Set<string>(['/admin'])
for (const entry of JSON.stringify(dashboard.props.nav).matchAll(/"href":"(\/admin[^"]*)"/g))
  paths.add(entry[1])
paths.add(`/admin/users/${book.owner_id}`)
paths.add(`/admin/books/${book.id}`)
const reader = new Database(file, { readonly: true })
const tables = reader
  .prepare('SELECT id FROM table_categories WHERE id IN (SELECT category_id FROM table_fields)')
  .all() as { id: number }[]
const sizes = tables.map(({ id }) => ({
  id,
  rows: (reader.prepare(`SELECT COUNT(*) AS n FROM tt_${id}`).get() as { n: number }).n,
}))
const biggest = sizes.sort((one, other) => other.rows - one.rows)[0]
const fields = reader
  .prepare('SELECT id, type FROM table_fields WHERE category_id = ? ORDER BY id')
  .all(biggest.id) as { id: number; type: string }[]
reader.close()
for (const { id } of sizes) paths.add(`/admin/tables/${id}`)
const grid = `/admin/tables/${biggest.id}`
const text = fields.find((field) => field.type === 'shorttext')
const number = fields.find((field) => field.type === 'double')
paths.add(`${grid}?page=${Math.max(1, Math.floor(biggest.rows / 100))}`)
paths.add(`${grid}?row=5`)
if (text) paths.add(`${grid}?sort=${text.id}&dir=desc`)
if (number) paths.add(`${grid}?sort=${number.id}`)
// Searches: a text no row holds (the worst case of a scan), a number some names hold, and a
// choice a fifth of the rows hold (more candidates than the indexes narrow: it scans).
paths.add(`${grid}?search=${encodeURIComponent('Customer 12345')}`)
paths.add(`${grid}?search=12345`)
paths.add(`${grid}?search=won`)

console.log(
  `\nbench:console on SQLite: ${biggest.rows.toLocaleString('en')} rows in the biggest table, ` +
    `${MESSAGES.toLocaleString('en')} messages, ${VISITS} visits a page\n`
)
const percentiles = (times: number[]) => {
  times.sort((one, other) => one - other)
  return {
    p50: times[Math.floor(times.length / 2)],
    p90: times[Math.min(times.length - 1, Math.floor(times.length * 0.9))],
  }
}
console.log(
  visitBefore
    ? `| page | before p50 | before p90 | p50 | p90 | target |\n|---|---|---|---|---|---|`
    : `| page | p50 | p90 | target |\n|---|---|---|---|`
)
for (const path of paths) {
  const times: number[] = []
  const timesBefore: number[] = []
  let status = 0
  for (let index = 0; index < VISITS; index++) {
    // The earlier build first: an index the new one builds on its first visit serves both after.
    if (visitBefore) {
      const earlier = await visitBefore(path)
      timesBefore.push(earlier.ms)
    }
    const answer = await visit(path)
    status = answer.status
    times.push(answer.ms)
  }
  const { p50, p90 } = percentiles(times)
  const flag = status !== 200 ? ` (HTTP ${status})` : p50 > TARGET_MS ? ' **over**' : ''
  const before = visitBefore ? percentiles(timesBefore) : null
  console.log(
    `| ${path} | ${before ? `${before.p50.toFixed(1)} ms | ${before.p90.toFixed(1)} ms | ` : ''}` +
      `${p50.toFixed(1)} ms | ${p90.toFixed(1)} ms | <= ${TARGET_MS} ms${flag} |`
  )
}
await serverBefore?.stop()
await server.stop()
