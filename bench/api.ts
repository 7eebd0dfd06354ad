/**
 * npm run bench:api — loopback load on getUserInfo, and on a bare node:http
 * server answering the same JSON bytes, in the same run.
 *
 * Target (issue 23 item 6): getUserInfo at >= 60% of the bare server's throughput, api.php
 * served ahead of the router (node_server.ts serveApiAhead). The same call through the router
 * (a second server, QUIRE_API_FAST_PATH=false) is measured in the same run for comparison.
 * Both servers run the compiled build (bin/start.js --build-only, in BENCH_BUILD_DIR).
 * autocannon runs in this process; each server runs in its own process.
 * Settings: BENCH_CONNECTIONS (32), BENCH_ROUNDS (5), BENCH_DURATION seconds per target and
 * round (4), DB_* / REDIS_* as for the server;
 * DATA_DIR may hold a previous run (the bench user is then reused); BENCH_BEFORE_SERVER: another
 * build's bin/server.js (an earlier commit's, made with its own `node bin/start.js --build-only`),
 * whose getUserInfo ahead of the router is measured in the same interleaved rounds: before/after
 * under the same load. BENCH_INPROCESS=1: instead of the loopback rounds, the JavaScript of a
 * getUserInfo alone, in each build's own process (bench/lib/api_inprocess.js: fake requests, no
 * sockets), this build and BENCH_BEFORE_SERVER's alternating, BENCH_ROUNDS runs of 8 rounds.
 */
import autocannon from 'autocannon'
import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync } from 'node:fs'
import { dirname, join, resolve as resolvePath } from 'node:path'
import {
  ROOT,
  ace,
  benchEnv,
  buildCompiled,
  cpuMsOf,
  freePort,
  signIn,
  startQuire,
} from './lib/quire_process.js'

const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const duration = Number(process.env.BENCH_DURATION ?? 4)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)

interface Figures {
  requests: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** Server CPU time (user + system) per answered request, in µs. */
  cpuUs: number
}

/** `cpuMs`: the CPU time the serving process has used so far (ms). */
async function load(url: string, seconds: number, cpuMs: () => number): Promise<Figures> {
  const cpuBefore = cpuMs()
  const result = await autocannon({ url, connections, duration: seconds, pipelining: 1 })
  return {
    cpuUs: ((cpuMs() - cpuBefore) * 1000) / Math.max(1, result.requests.total),
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

/**
 * BENCH_INPROCESS: each build's api_inprocess run, the builds alternating; the minimum and the
 * median of each build's rounds (CPU µs per getUserInfo).
 */
function inProcess(query: string, builds: Record<string, string>) {
  const measured = new Map<string, number[]>(Object.keys(builds).map((name) => [name, []]))
  for (const server of Object.values(builds))
    copyFileSync(
      join(ROOT, 'bench/lib/api_inprocess.js'),
      join(dirname(server), 'api_inprocess.js')
    )
  for (let run = 0; run < rounds; run++) {
    for (const [name, server] of Object.entries(builds)) {
      const output = execFileSync(process.execPath, [join(dirname(server), 'api_inprocess.js')], {
        cwd: ROOT,
        env: { ...env, HARNESS_QUERY: query, PORT: '0', HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'inherit'],
      }).toString()
      const { cpuUs } = JSON.parse(output.trim().split('\n').at(-1)!) as { cpuUs: number[] }
      measured.get(name)!.push(...cpuUs)
      console.log(`${name}: ${cpuUs.map((us) => us.toFixed(1)).join(' ')} µs`)
    }
  }
  for (const [name, list] of measured) {
    const sorted = [...list].sort((a, b) => a - b)
    console.log(
      `${name}: CPU per getUserInfo in-process, min ${sorted[0].toFixed(2)} µs, median ` +
        `${sorted[Math.floor(sorted.length / 2)].toFixed(2)} µs (${list.length} rounds)`
    )
  }
}

async function startBareServer(body: string) {
  const port = await freePort()
  const source = `
    const http = require('node:http')
    const body = Buffer.from(process.env.BODY)
    http.createServer((req, res) => {
      req.resume()
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length })
      res.end(body)
    }).listen(${port}, '127.0.0.1', () => process.send && process.send('ready'))
  `
  const child = spawn(process.execPath, ['-e', source], {
    env: { ...process.env, BODY: body },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  await new Promise((resolve) => child.once('message', resolve))
  return {
    url: `http://127.0.0.1:${port}`,
    cpuMs: () => cpuMsOf(child.pid),
    stop: () => child.kill('SIGTERM'),
  }
}

// Absolute: a build elsewhere (BENCH_BEFORE_SERVER) resolves a relative data folder from its own root.
const env = benchEnv()
env.DATA_DIR = resolvePath(env.DATA_DIR!)
console.log(
  `database: ${env.DB_CONNECTION ?? 'sqlite'}${env.REDIS_HOST ? ' + redis' : ''}; data: ${env.DATA_DIR}`
)
ace(env, 'migration:run', '--force')
let userError: unknown = null
try {
  ace(env, 'user:create', 'benchuser', 'bench@bench.local', 'bench-password')
} catch (error) {
  // A previous run's DATA_DIR already has the user: signing in below tells whether it is usable.
  userError = error
}

const compiled = buildCompiled()
const quire = await startQuire(env, { compiled })
const router = await startQuire({ ...env, QUIRE_API_FAST_PATH: 'false' }, { compiled })
const BEFORE = process.env.BENCH_BEFORE_SERVER
const before = BEFORE ? await startQuire(env, { compiled: BEFORE }) : null
try {
  const session = await signIn(quire.url, 'bench@bench.local', 'bench-password').catch((error) => {
    throw userError ?? error
  })
  const query = new URLSearchParams({
    req: 'getUserInfo',
    version: '6.49q/6.49',
    ...session,
    u_c: session.o_u,
  })
  const endpoint = `${quire.url}/live/api.php?${query}`
  const routerEndpoint = `${router.url}/live/api.php?${query}`
  const sampleResponse = await fetch(endpoint)
  const sample = await sampleResponse.text()
  if (!sample.includes('"status":"ok"')) throw new Error(`getUserInfo failed: ${sample}`)
  const routerResponse = await fetch(routerEndpoint)
  const routerSample = await routerResponse.text()
  if (!routerSample.includes('"status":"ok"'))
    throw new Error(`getUserInfo through the router failed: ${routerSample}`)
  const beforeEndpoint = before ? `${before.url}/live/api.php?${query}` : ''
  if (before) {
    const beforeResponse = await fetch(beforeEndpoint)
    const beforeSample = await beforeResponse.text()
    if (!beforeSample.includes('"status":"ok"'))
      throw new Error(`getUserInfo on BENCH_BEFORE_SERVER failed: ${beforeSample}`)
  }

  if (process.env.BENCH_INPROCESS === '1') {
    await Promise.all([quire.stop(), router.stop(), before?.stop()])
    inProcess(query.toString(), { 'this build': compiled, ...(BEFORE ? { before: BEFORE } : {}) })
    process.exit(0)
  }
  const bare = await startBareServer(sample)
  try {
    console.log(
      `warming up (3 s each), then ${rounds} rounds of ${duration} s per target at ` +
        `${connections} connections, the targets interleaved`
    )
    const targets: Record<string, [string, () => number]> = {
      'bare node:http': [bare.url, bare.cpuMs],
      'Quire /health route': [`${quire.url}/health`, quire.cpuMs],
      'Quire getUserInfo': [endpoint, quire.cpuMs],
      '  through the router': [routerEndpoint, router.cpuMs],
      ...(before
        ? { 'before: getUserInfo': [beforeEndpoint, before.cpuMs] as [string, () => number] }
        : {}),
    }
    for (const [url, cpu] of Object.values(targets)) await load(url, 3, cpu)
    const measured = new Map<string, Figures[]>(Object.keys(targets).map((name) => [name, []]))
    for (let round = 0; round < rounds; round++) {
      for (const [name, [url, cpu]] of Object.entries(targets))
        measured.get(name)!.push(await load(url, duration, cpu))
    }

    const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
    const row = (name: string, list: Figures[]) =>
      `${name.padEnd(22)} ${median(list.map((f) => f.requests))
        .toFixed(0)
        .padStart(
          8
        )} req/s   p50 ${String(median(list.map((f) => f.p50))).padStart(4)} ms   p99 ${String(median(list.map((f) => f.p99))).padStart(4)} ms   server CPU ${median(
        list.map((f) => f.cpuUs)
      )
        .toFixed(0)
        .padStart(4)} µs/req   errors ${list.reduce((sum, f) => sum + f.errors + f.non2xx, 0)}`
    console.log('')
    console.log('medians of the rounds:')
    for (const [name, list] of measured) console.log(row(name, list))
    // Each round's ratio against the bare server measured in that round: the load of a shared
    // machine moves all targets of a round together far more than it moves their ratio.
    const bareRounds = measured.get('bare node:http')!
    const ratios = (name: string) =>
      measured.get(name)!.map((figures, round) => figures.requests / bareRounds[round].requests)
    const percent = (list: number[]) => `${(median(list) * 100).toFixed(1)}%`
    const fast = ratios('Quire getUserInfo')
    console.log(
      `ratio (median of the rounds' ratios): ${percent(fast)} of the bare server ` +
        `(target >= 60%; rounds ${fast.map((r) => (r * 100).toFixed(0)).join(', ')}); ` +
        `through the router ${percent(ratios('  through the router'))}`
    )
    // The rate a server reaches on a free core is bounded by its CPU per request: the bare
    // server's CPU per request over Quire's is the same ratio, far less moved by other load.
    const cpu = (name: string) => median(measured.get(name)!.map((figures) => figures.cpuUs))
    const byCpu = (name: string) => `${((cpu('bare node:http') / cpu(name)) * 100).toFixed(1)}%`
    console.log(
      `by server CPU per request: getUserInfo ${byCpu('Quire getUserInfo')} of the bare ` +
        `server; through the router ${byCpu('  through the router')}`
    )
    if (before) {
      const againstBefore = measured
        .get('Quire getUserInfo')!
        .map((figures, round) => figures.cpuUs / measured.get('before: getUserInfo')![round].cpuUs)
      console.log(
        `BENCH_BEFORE_SERVER: getUserInfo ${percent(ratios('before: getUserInfo'))} of the bare ` +
          `server, by CPU ${byCpu('before: getUserInfo')}; this build's CPU per getUserInfo ` +
          `over its: ${againstBefore.map((r) => (r * 100).toFixed(0)).join(', ')}%`
      )
    }
  } finally {
    bare.stop()
  }
} finally {
  await Promise.all([quire.stop(), router.stop(), before?.stop()])
}
