/**
 * npm run bench:api — loopback load on getUserInfo, and on a bare node:http
 * server answering the same JSON bytes, in the same run.
 *
 * Target (issue 2): getUserInfo at >= 30% of the bare server's throughput.
 * autocannon runs in this process; each server runs in its own process.
 * Settings: BENCH_CONNECTIONS (32), BENCH_DURATION seconds (10), DB_* / REDIS_* as for the server.
 */
import autocannon from 'autocannon'
import { spawn } from 'node:child_process'
import { ace, benchEnv, freePort, signIn, startQuire } from './lib/quire_process.js'

const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const duration = Number(process.env.BENCH_DURATION ?? 10)

interface Figures {
  requests: number
  p50: number
  p99: number
  errors: number
  non2xx: number
}

async function load(url: string, seconds: number): Promise<Figures> {
  const result = await autocannon({ url, connections, duration: seconds, pipelining: 1 })
  return {
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
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
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') }
}

const env = benchEnv()
console.log(
  `database: ${env.DB_CONNECTION ?? 'sqlite'}${env.REDIS_HOST ? ' + redis' : ''}; data: ${env.DATA_DIR}`
)
ace(env, 'migration:run', '--force')
ace(env, 'user:create', 'benchuser', 'bench@bench.local', 'bench-password')

const quire = await startQuire(env)
try {
  const session = await signIn(quire.url, 'bench@bench.local', 'bench-password')
  const query = new URLSearchParams({
    req: 'getUserInfo',
    version: '6.49q/6.49',
    ...session,
    u_c: session.o_u,
  })
  const endpoint = `${quire.url}/live/api.php?${query}`
  const sampleResponse = await fetch(endpoint)
  const sample = await sampleResponse.text()
  if (!sample.includes('"status":"ok"')) throw new Error(`getUserInfo failed: ${sample}`)

  const bare = await startBareServer(sample)
  try {
    console.log(
      `warming up (3 s each), then ${duration} s per target at ${connections} connections`
    )
    await load(bare.url, 3)
    await load(endpoint, 3)
    const bareFigures = await load(bare.url, duration)
    const routeFigures = await load(`${quire.url}/health`, duration)
    const quireFigures = await load(endpoint, duration)

    const row = (name: string, figures: Figures) =>
      `${name.padEnd(22)} ${figures.requests.toFixed(0).padStart(8)} req/s   p50 ${String(figures.p50).padStart(4)} ms   p99 ${String(figures.p99).padStart(4)} ms   errors ${figures.errors + figures.non2xx}`
    console.log('')
    console.log(row('bare node:http', bareFigures))
    console.log(row('Quire /health route', routeFigures))
    console.log(row('Quire getUserInfo', quireFigures))
    const ratio = quireFigures.requests / bareFigures.requests
    console.log(`ratio: ${(ratio * 100).toFixed(1)}% of the bare server (target >= 30%)`)
  } finally {
    bare.stop()
  }
} finally {
  await quire.stop()
}
