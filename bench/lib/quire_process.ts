/**
 * Starts a real Quire server for a benchmark: its own data folder (SQLite) or
 * the database given in the environment, migrated, production mode, quiet
 * logs. Returns its URL and a stop function.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve as resolvePath } from 'node:path'
import { createServer } from 'node:net'

export const ROOT = new URL('../../', import.meta.url).pathname

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

export interface QuireProcess {
  url: string
  env: NodeJS.ProcessEnv
  child: ChildProcess
  stop(): Promise<void>
  /** CPU time the server has used so far, in ms (Linux; NaN elsewhere). */
  cpuMs(): number
}

/**
 * CPU time (user + system) of process `pid` in ms, from /proc (NaN where there is none). On a
 * shared, loaded machine a rate swings with the load; the CPU time per call much less.
 */
export function cpuMsOf(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command (in parentheses, which may hold spaces): utime is the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
  } catch {
    return Number.NaN
  }
}
/** USER_HZ: 100 on every Linux build Node supports. */
const CLOCK_TICKS = 100

export function benchEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    DATA_DIR: process.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'quire-bench-')),
    ...extra,
  }
}

/** Runs an ace command synchronously with the bench environment. */
export function ace(env: NodeJS.ProcessEnv, ...args: string[]) {
  return execFileSync(process.execPath, ['ace', ...args], {
    cwd: ROOT,
    env,
    stdio: 'pipe',
  }).toString()
}

/** Children still running when this process ends are killed, never left holding a port or a pipe. */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

const BOOT_TIMEOUT_MS = 120_000
const STOP_GRACE_MS = 15_000

/**
 * The compiled build `npm start` serves (bin/start.js --build-only: remade only when the sources
 * changed), in `dir` of the checkout. Benchmarks measure it: no TypeScript loader in the server.
 * BENCH_SERVER: the bin/server.js of a build made elsewhere (an earlier commit's, built in its own
 * worktree), served as it is: runs of the same benchmark against two builds, one after the other.
 */
export function buildCompiled(dir = process.env.BENCH_BUILD_DIR ?? 'tmp/bench-build'): string {
  if (process.env.BENCH_SERVER) return process.env.BENCH_SERVER
  execFileSync(process.execPath, ['bin/start.js', '--build-only', `--build-dir=${dir}`], {
    cwd: ROOT,
    stdio: 'inherit',
  })
  return join(ROOT, dir, 'bin/server.js')
}

/**
 * `root`: the checkout to run (this one by default; a test may boot a scaffolded copy).
 * `compiled`: the path of a compiled build's bin/server.js (buildCompiled) to serve instead of
 * the TypeScript sources under ts-node.
 */
export async function startQuire(
  env: NodeJS.ProcessEnv,
  options: { root?: string; compiled?: string } = {}
): Promise<QuireProcess> {
  const port = await freePort()
  const root = options.root ?? ROOT
  const childEnv: NodeJS.ProcessEnv = { ...env, PORT: String(port), HOST: '127.0.0.1' }
  // A relative DATA_DIR is the bench's, in this checkout: a server resolves it against its own
  // checkout, which for another commit's build (BENCH_SERVER) is elsewhere (an empty database).
  if (env.DATA_DIR) childEnv.DATA_DIR = resolvePath(root, env.DATA_DIR)
  const child = spawn(
    process.execPath,
    options.compiled
      ? [...(env.BENCH_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []), options.compiled]
      : ['--import=ts-node-maintained/register/esm', 'bin/server.ts'],
    {
      cwd: root,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'inherit'],
    }
  )
  running.add(child)
  child.once('exit', () => running.delete(child))
  // BENCH_SERVER_LOGS=1: the server's log (stdout) on this process's stderr, to see its errors
  // (BENCH_LOG_LEVEL=info for more than warnings).
  // Otherwise read and dropped: a pipe nobody reads fills up (64 KiB), and the server's log
  // writes then wait for a reader that never comes.
  if (env.BENCH_SERVER_LOGS === '1') child.stdout?.pipe(process.stderr)
  else child.stdout?.resume()
  const url = `http://127.0.0.1:${port}`
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
      child.once('exit', () => {
        clearTimeout(kill)
        resolve()
      })
      child.kill('SIGTERM')
    })
  const deadline = Date.now() + BOOT_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Quire exited with ${child.exitCode}`)
    try {
      // Readiness, not liveness: the HTTP port opens before the providers' ready hooks bind
      // their listeners (inbound SMTP, AUTH_PORT). A dependency that is down (503
      // "unavailable") does not hold the start up; a build older than the endpoint answers 404.
      const response = await fetch(`${url}/health/ready`)
      const body = response.status === 404 ? null : ((await response.json()) as { status?: string })
      if (body?.status !== 'starting') break
    } catch {}
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`Quire was not ready within ${BOOT_TIMEOUT_MS / 1000} s`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { url, env: childEnv, child, stop, cpuMs: () => cpuMsOf(child.pid) }
}

/** createAppkey -> createOauthkey -> createSesskey, as real clients do. */
export async function signIn(url: string, login: string, pwd: string) {
  const call = async (params: Record<string, string>) => {
    const response = await fetch(`${url}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    })
    const body = (await response.json()) as Record<string, any>
    if (body.status !== 'ok') throw new Error(`${params.req} failed: ${JSON.stringify(body)}`)
    return body
  }
  const { appkey } = await call({ req: 'createAppkey', appname: 'bench' })
  const { oauthkey, o_u: ou } = await call({ req: 'createOauthkey', appkey, login, pwd })
  const { sesskey } = await call({ req: 'createSesskey', o_u: ou, oauthkey })
  return { o_u: ou as string, sesskey: sesskey as string }
}
