/**
 * bench:auth — the authentication service (plugins/auth_service), measured
 * over real HTTP against real server processes:
 *
 *  1. Throughput of a bearer-protected endpoint (GET {auth_url}/api/me) against
 *     an unprotected one (GET {auth_url}/api/ping) on the same route group;
 *     the goal is >= 70%. Measured with the session-state cache
 *     (AUTH_SESSION_CACHE=auto) and with a database read on every request
 *     (AUTH_SESSION_CACHE=off). Rounds alternate the two endpoints, so that
 *     load from elsewhere on the machine hits both alike.
 *  2. revoke-others takes effect on the next request of every other session:
 *     every other session is probed in a loop while the revocation happens;
 *     each probe sent after the revoke-others answer arrived must be refused.
 *  3. The same across two instances sharing MariaDB and Redis (sessions
 *     created on both, probed on both, revoked through one). Needs
 *     DB_CONNECTION=mysql and REDIS_HOST; skipped (said so) otherwise.
 *
 *   npm run bench:auth                                    # SQLite, one instance
 *   DB_CONNECTION=mysql DB_HOST=127.0.0.1 DB_USER=root DB_DATABASE=quire_bench_auth \
 *     REDIS_HOST=127.0.0.1 REDIS_PREFIX=quire_bench_auth: npm run bench:auth
 *
 * BENCH_SECONDS (per autocannon run, default 4), BENCH_ROUNDS (default 4),
 * BENCH_CONNECTIONS (default 32), BENCH_SESSIONS (sessions revoked per round,
 * default 20), BENCH_PORT (first server port, default 39400).
 * The database is migrated fresh (migration:fresh) first.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

const require = createRequire(import.meta.url)
const autocannon = require('autocannon')

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20)
const REVOKE_ROUNDS = 5
const FIRST_PORT = Number(process.env.BENCH_PORT ?? 39400)
const PREFIX = process.env.AUTH_URL_PREFIX ?? '/auth'
const PASSWORD = 'bench-auth-password'
const onMysql = process.env.DB_CONNECTION === 'mysql'
const withRedis = Boolean(process.env.REDIS_HOST)

process.env.DATA_DIR = process.env.DATA_DIR ?? 'tmp/bench-auth'
process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn'
mkdirSync(`${ROOT}${process.env.DATA_DIR}`, { recursive: true })

const figures: string[] = []
const report = (line: string) => {
  console.log(line)
  figures.push(line)
}

// ---- fixture -----------------------------------------------------------------
console.log(
  `\nbench:auth on ${onMysql ? 'MariaDB/MySQL' : 'SQLite'}${withRedis ? ' + Redis' : ''}\n`
)
const ace = (...args: string[]) =>
  execFileSync('node', ['ace', ...args], { cwd: ROOT, env: process.env, stdio: 'inherit' })
ace('migration:fresh', '--force')
const USER = { code: 'benchauth', email: 'bench.auth@example.test' }
ace('user:create', USER.code, USER.email, PASSWORD)

// ---- server processes ----------------------------------------------------------
interface Instance {
  url: string
  child: ChildProcess
}
const running: Instance[] = []

async function startInstance(port: number, env: Record<string, string> = {}): Promise<Instance> {
  const log = createWriteStream(`${ROOT}${process.env.DATA_DIR}/server-${port}.log`)
  const child = spawn('node', ['--import=ts-node-maintained/register/esm', 'bin/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      // The revocation rounds call revoke-others more often than its production limit allows.
      AUTH_REVOKE_MAX_REQUESTS: '100000',
      ...env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.pipe(log)
  child.stderr!.pipe(log)
  const url = `http://127.0.0.1:${port}`
  const instance = { url, child }
  running.push(instance)
  for (let waited = 0; waited < 120_000; waited += 250) {
    if (child.exitCode !== null)
      throw new Error(
        `server on port ${port} exited; see ${process.env.DATA_DIR}/server-${port}.log`
      )
    try {
      const ping = await fetch(`${url}${PREFIX}/api/ping`)
      if (ping.ok) return instance
    } catch {}
    await sleep(250)
  }
  throw new Error(`server on port ${port} did not start`)
}

async function stopInstance(instance: Instance) {
  if (instance.child.exitCode !== null) return
  const exited = new Promise((resolve) => instance.child.once('exit', resolve))
  process.kill(-instance.child.pid!, 'SIGTERM')
  await Promise.race([exited, sleep(10_000)])
  if (instance.child.exitCode === null) process.kill(-instance.child.pid!, 'SIGKILL')
  running.splice(running.indexOf(instance), 1)
}

async function stopAll() {
  for (const instance of [...running]) await stopInstance(instance)
}
process.on('SIGINT', () => void stopAll().then(() => process.exit(130)))

// ---- HTTP helpers --------------------------------------------------------------
async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init)
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

async function signIn(instance: Instance) {
  const answer = await json(`${instance.url}${PREFIX}/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login: USER.email, password: PASSWORD }),
  })
  if (!answer.body.jwt) throw new Error(`login failed: ${JSON.stringify(answer.body)}`)
  return answer.body as { jwt: string; refresh_token: string }
}

const me = (instance: Instance, jwt: string) =>
  fetch(`${instance.url}${PREFIX}/api/me`, { headers: { Authorization: `Bearer ${jwt}` } }).then(
    async (response) => {
      await response.arrayBuffer()
      return response.status
    }
  )

/** An api.php session of the same user (createAppkey -> createOauthkey -> createSesskey). */
async function apiSession(instance: Instance) {
  const rpc = (params: Record<string, string>) =>
    json(`${instance.url}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    }).then((answer) => answer.body)
  const { appkey } = await rpc({ req: 'createAppkey', appname: 'bench-auth' })
  const oauth = await rpc({ req: 'createOauthkey', appkey, login: USER.email, pwd: PASSWORD })
  const sess = await rpc({ req: 'createSesskey', o_u: oauth.o_u, oauthkey: oauth.oauthkey })
  return {
    alive: async () => {
      const info = await rpc({ req: 'getUserInfo', o_u: oauth.o_u, sesskey: sess.sesskey })
      return info.status === 'ok'
    },
  }
}

/** One autocannon run; `tokens` gives each connection its own session's bearer token. */
function cannon(
  url: string,
  tokens: string[] = []
): Promise<{ rps: number; non2xx: number; errors: number; p99: number }> {
  let next = 0
  const setupClient = (client: any) => {
    if (tokens.length > 0)
      client.setHeaders({ Authorization: `Bearer ${tokens[next++ % tokens.length]}` })
  }
  return new Promise((resolve, reject) => {
    autocannon(
      { url, connections: CONNECTIONS, duration: SECONDS, setupClient },
      (error: Error | null, result: any) => {
        if (error) return reject(error)
        resolve({
          rps: result.requests.average,
          non2xx: result.non2xx,
          errors: result.errors,
          p99: result.latency.p99,
        })
      }
    )
  })
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

// ---- 1. throughput -------------------------------------------------------------
async function throughput(mode: 'auto' | 'off') {
  const instance = await startInstance(FIRST_PORT, { AUTH_SESSION_CACHE: mode })
  try {
    // One session per connection, as CONNECTIONS separate clients would be.
    const sessions = await Promise.all(Array.from({ length: CONNECTIONS }, () => signIn(instance)))
    const tokens = sessions.map((session) => session.jwt)
    const unprotected = `${instance.url}${PREFIX}/api/ping`
    const protectedUrl = `${instance.url}${PREFIX}/api/me`
    await cannon(unprotected)
    await cannon(protectedUrl, tokens)
    const open: number[] = []
    const guarded: number[] = []
    let failures = 0
    for (let round = 0; round < ROUNDS; round++) {
      const a = await cannon(unprotected)
      const b = await cannon(protectedUrl, tokens)
      open.push(a.rps)
      guarded.push(b.rps)
      failures += a.non2xx + a.errors + b.non2xx + b.errors
      console.log(
        `  round ${round + 1}: ping ${a.rps.toFixed(0)} req/s, me ${b.rps.toFixed(0)} req/s (p99 ${a.p99} / ${b.p99} ms)`
      )
    }
    const ratio =
      guarded.reduce((sum, value) => sum + value, 0) / open.reduce((sum, value) => sum + value, 0)
    const label = mode === 'auto' ? 'session-state cache' : 'database read per request'
    report(
      `throughput (${label}): unprotected ${median(open).toFixed(0)} req/s, bearer-protected ${median(guarded).toFixed(0)} req/s (medians of ${ROUNDS}); ratio ${(ratio * 100).toFixed(1)}%${failures ? `; ${failures} failed requests!` : ''}`
    )
    return { ratio, failures }
  } finally {
    await stopInstance(instance)
  }
}

// ---- 2 and 3. revocation on the next request -------------------------------------
interface Probe {
  session: number
  instance: number
  sentAt: number
  status: number
}

/**
 * One round: SESSIONS other sessions (signed in on the instances in turn, each
 * checked once on every instance so that every cache holds it as active) are
 * probed in a loop on every instance while the first session calls
 * revoke-others through instances[0].
 */
async function revocationRound(instances: Instance[]) {
  const current = await signIn(instances[0])
  const others = await Promise.all(
    Array.from({ length: SESSIONS }, (_, index) => signIn(instances[index % instances.length]))
  )
  const apiSessions = await Promise.all(instances.map((instance) => apiSession(instance)))
  for (const session of others) {
    for (const instance of instances) {
      if ((await me(instance, session.jwt)) !== 200)
        throw new Error('a fresh session was refused before the revocation')
    }
  }

  const probes: Probe[] = []
  let stop = false
  const loops = others.flatMap((session, sessionIndex) =>
    instances.map(async (instance, instanceIndex) => {
      while (!stop) {
        const sentAt = performance.now()
        const status = await me(instance, session.jwt)
        probes.push({ session: sessionIndex, instance: instanceIndex, sentAt, status })
      }
    })
  )
  await sleep(150)
  const revokeStart = performance.now()
  const answer = await json(`${instances[0].url}${PREFIX}/api/sessions/revoke-others`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${current.jwt}` },
  })
  const revokeEnd = performance.now()
  // Keep probing until every (session, instance) pair has sent a request after the answer.
  const pairs = others.length * instances.length
  for (let waited = 0; waited < 15_000; waited += 50) {
    const seen = new Set(
      probes
        .filter((probe) => probe.sentAt > revokeEnd)
        .map((probe) => `${probe.session}:${probe.instance}`)
    )
    if (seen.size === pairs) break
    await sleep(50)
  }
  stop = true
  await Promise.all(loops)

  if (answer.status !== 200) throw new Error(`revoke-others failed: ${JSON.stringify(answer.body)}`)
  const after = probes.filter((probe) => probe.sentAt > revokeEnd)
  const acceptedAfter = after.filter((probe) => probe.status === 200).length
  // Each (session, instance) pair's first request sent after the answer.
  const firstAfter = new Map<string, Probe>()
  for (const probe of after) {
    const key = `${probe.session}:${probe.instance}`
    if (!firstAfter.has(key) || firstAfter.get(key)!.sentAt > probe.sentAt)
      firstAfter.set(key, probe)
  }
  const firstRefused = [...firstAfter.values()].filter((probe) => probe.status === 401).length
  const currentAlive = await Promise.all(instances.map((instance) => me(instance, current.jwt)))
  const apiAlive = await Promise.all(apiSessions.map((session) => session.alive()))
  // The next round starts with no other session alive.
  await json(`${instances[0].url}${PREFIX}/logout`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${current.jwt}` },
  })
  return {
    latency: revokeEnd - revokeStart,
    revoked: answer.body.revoked as number,
    expected: SESSIONS + apiSessions.length,
    probesAfter: after.length,
    acceptedAfter,
    firstAfter: firstAfter.size,
    firstRefused,
    pairs,
    currentKept: currentAlive.every((status) => status === 200),
    apiDropped: apiAlive.every((alive) => !alive),
  }
}

async function revocation(instances: Instance[], label: string) {
  // Sessions left by earlier phases would inflate the first count: end them first.
  const sweeper = await signIn(instances[0])
  const sweep = { method: 'POST', headers: { Authorization: `Bearer ${sweeper.jwt}` } }
  await json(`${instances[0].url}${PREFIX}/api/sessions/revoke-others`, sweep)
  await json(`${instances[0].url}${PREFIX}/logout`, sweep)
  let ok = true
  const latencies: number[] = []
  let probes = 0
  let accepted = 0
  for (let round = 0; round < REVOKE_ROUNDS; round++) {
    const result = await revocationRound(instances)
    latencies.push(result.latency)
    probes += result.probesAfter
    accepted += result.acceptedAfter
    const roundOk =
      result.acceptedAfter === 0 &&
      result.firstRefused === result.pairs &&
      result.revoked === result.expected &&
      result.currentKept &&
      result.apiDropped
    ok &&= roundOk
    console.log(
      `  round ${round + 1}: revoke-others answered in ${result.latency.toFixed(1)} ms, revoked ${result.revoked}/${result.expected}; ` +
        `first request after the answer refused for ${result.firstRefused}/${result.pairs} (session, instance) pairs; ` +
        `${result.acceptedAfter}/${result.probesAfter} later probes accepted; current session kept: ${result.currentKept}; api.php sesskeys dropped: ${result.apiDropped}`
    )
  }
  report(
    `revoke-others, ${label}: ${REVOKE_ROUNDS} rounds x ${SESSIONS} other sessions; ${probes} requests sent after the answer, ${accepted} accepted; ` +
      `revoke-others latency median ${median(latencies).toFixed(1)} ms (max ${Math.max(...latencies).toFixed(1)} ms) -> ${ok ? 'takes effect on the next request' : 'FAILED'}`
  )
  return ok
}

// ---- run -----------------------------------------------------------------------
let failed = false
try {
  console.log('1. throughput, one instance, session-state cache (AUTH_SESSION_CACHE=auto)')
  const cached = await throughput('auto')
  console.log('   same, database read on every bearer check (AUTH_SESSION_CACHE=off)')
  await throughput('off')
  if (cached.ratio < 0.7 || cached.failures > 0) failed = true

  console.log('\n2. revoke-others, one instance')
  const single = await startInstance(FIRST_PORT)
  try {
    failed = !(await revocation([single], 'one instance')) || failed
  } finally {
    await stopInstance(single)
  }

  console.log('\n3. revoke-others across two instances sharing the database and Redis')
  if (onMysql && withRedis) {
    const pair = [await startInstance(FIRST_PORT), await startInstance(FIRST_PORT + 1)]
    try {
      failed = !(await revocation(pair, 'two instances (MariaDB + Redis)')) || failed
    } finally {
      for (const instance of pair) await stopInstance(instance)
    }
  } else {
    report('revoke-others across two instances: SKIPPED (needs DB_CONNECTION=mysql and REDIS_HOST)')
  }
} catch (error) {
  failed = true
  console.error(error)
} finally {
  await stopAll()
}

console.log('\nFigures:')
for (const line of figures) console.log(`  ${line}`)
console.log(
  failed
    ? '\nbench:auth: FAILED'
    : '\nbench:auth: OK (protected >= 70% of unprotected; revocation on the next request)'
)
process.exit(failed ? 1 : 0)
