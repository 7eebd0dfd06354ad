import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/**
 * Instances run in their own process group (so a stop reaches the whole
 * group); should the test process end without stopping one, these groups are
 * killed on exit so no server outlives the run and holds the database.
 */
const runningGroups = new Set<number>()
process.once('exit', () => {
  for (const pid of runningGroups) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {}
  }
})

export interface Instance {
  url: string
  child: ChildProcess
  stop(): Promise<void>
}

/**
 * Starts a Quire server process (`bin/server.ts`, web environment) on a
 * loopback port with the given environment on top of this process's one
 * (same database, same Redis), and waits until it answers /health.
 */
export async function startInstance(
  port: number,
  env: Record<string, string> = {}
): Promise<Instance> {
  const logDir = `${ROOT}tmp/socket-instances`
  mkdirSync(logDir, { recursive: true })
  const log = createWriteStream(`${logDir}/server-${port}.log`)
  const child = spawn(
    process.execPath,
    ['--import=ts-node-maintained/register/esm', 'bin/server.ts'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        PORT: String(port),
        HOST: '127.0.0.1',
        ...env,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    }
  )
  child.stdout!.pipe(log)
  child.stderr!.pipe(log)
  runningGroups.add(child.pid!)
  child.once('exit', () => runningGroups.delete(child.pid!))
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {}
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    }, 5000)
    await exited
    clearTimeout(timer)
  }
  for (let waited = 0; waited < 90_000; waited += 250) {
    if (child.exitCode !== null)
      throw new Error(`server on port ${port} exited; see tmp/socket-instances/server-${port}.log`)
    try {
      // Ready, not only live: the socket bus connects in a ready hook, after the port opens.
      const health = await fetch(`${url}/health/ready`)
      if (health.ok) return { url, child, stop }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  await stop()
  throw new Error(`server on port ${port} did not start`)
}
