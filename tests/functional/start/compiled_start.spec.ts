import { test } from '@japa/runner'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { randomBytes } from 'node:crypto'
import { childEnv } from '#tests/helpers/child_env'
import { ROOT, freePort, signIn } from '../../../bench/lib/quire_process.js'
import { STAMP, listFiles, readStamp } from '../../../bin/build_stamp.js'

const BOOT_TIMEOUT_MS = 180_000
const STOP_GRACE_MS = 15_000

/** What a process was started with: its command line and its NODE_OPTIONS. */
function launchOf(pid: number) {
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
  const nodeOptions = environ.find((entry) => entry.startsWith('NODE_OPTIONS='))
  return { cmdline, nodeOptions: nodeOptions?.slice('NODE_OPTIONS='.length) ?? '' }
}

/** The processes of a process group (the group `npm start` leads: npm, its shell, node). */
function groupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // After the parenthesised command name: state, ppid, pgrp. An ended (zombie) one is gone.
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
        return fields[0] !== 'Z' && Number(fields[2]) === pgid
      } catch {
        return false // ended meanwhile
      }
    })
    .map(Number)
}

/** `npm start -- --build-dir=...` in its own process group, until /health answers. */
async function npmStart(buildDir: string, env: NodeJS.ProcessEnv) {
  const port = await freePort()
  const child: ChildProcess = spawn(
    'npm',
    ['start', '--', `--build-dir=${relative(ROOT, buildDir)}`],
    {
      cwd: ROOT,
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    }
  )
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  /** SIGTERM to the whole group (npm, its shell, the server), then waits until all have ended. */
  const stop = async () => {
    const pgid = child.pid!
    if (groupMembers(pgid).length === 0) return
    process.kill(-pgid, 'SIGTERM')
    const deadline = Date.now() + STOP_GRACE_MS
    while (groupMembers(pgid).length > 0) {
      if (Date.now() > deadline) process.kill(-pgid, 'SIGKILL')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + BOOT_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`npm start exited with ${child.exitCode}:\n${output}`)
    try {
      const health = await fetch(`${url}/health`)
      if (health.ok) break
    } catch {}
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`npm start: no /health within ${BOOT_TIMEOUT_MS / 1000} s:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { url, pgid: child.pid!, stop, output: () => output }
}

test.group('npm start serves the compiled build', () => {
  test('builds when missing or stale; the serving process runs no TypeScript loader and serves /health, api.php and the console', async ({
    assert,
    cleanup,
  }) => {
    // Inside the checkout, as build/ is: the checkout's node_modules resolve from its parents.
    const buildDir = join(ROOT, 'tmp', `start-build-${randomBytes(4).toString('hex')}`)
    cleanup(() => rm(buildDir, { recursive: true, force: true }))
    const env = childEnv({}, { embedded: true })
    cleanup(() => rm(env.DATA_DIR!, { recursive: true, force: true }))

    // 1. No build yet: npm start makes one, sets up (migrations, demo admin) and serves it.
    const first = await npmStart(buildDir, env)
    cleanup(first.stop)
    const stamp = readStamp(buildDir)
    assert.isNotNull(stamp, 'a finished build carries its stamp')
    assert.include(first.output(), 'Quire demo administrator')
    assert.deepEqual(
      listFiles(buildDir, ['.']).filter((file) => /\.tsx?$/.test(file)),
      [],
      'the build holds no TypeScript'
    )

    // The serving process: the node process of npm's group that runs bin/start.js.
    const serving = groupMembers(first.pgid).filter((pid) =>
      launchOf(pid).cmdline.some((arg) => arg.endsWith('bin/start.js'))
    )
    assert.lengthOf(serving, 1, 'one serving process')
    const launch = launchOf(serving[0])
    // Node's options come before the script: none (no --import / --loader / --require).
    assert.match(launch.cmdline[1], /bin\/start\.js$/, launch.cmdline.join(' '))
    assert.notMatch(launch.nodeOptions, /ts-node|--import|--loader|--require|-r /)
    // ts-node transpiles with @swc/core's native binding: the serving process never mapped it.
    assert.notInclude(readFileSync(`/proc/${serving[0]}/maps`, 'utf8'), '@swc')
    // Without a loader Node cannot import a .ts file at all: everything it serves is the build's.

    const admin = JSON.parse(readFileSync(join(env.DATA_DIR!, 'demo-admin.json'), 'utf8'))
    const session = await signIn(first.url, admin.email, admin.password)
    const books = await fetch(`${first.url}/live/api.php`, {
      method: 'POST',
      body: new URLSearchParams({ req: 'getAllBooks', ...session }),
    }).then((response) => response.json() as Promise<any>)
    assert.equal(books.status, 'ok', JSON.stringify(books))
    const login = await fetch(`${first.url}/admin/login`)
    assert.equal(login.status, 200)
    const page = await login.text()
    const script = page.match(/src="(\/admin\/assets\/[^"]+\.js)"/)
    assert.isNotNull(script, 'the console page loads its bundle')
    const bundle = await fetch(`${first.url}${script![1]}`)
    assert.equal(bundle.status, 200)
    await first.stop()

    // 2. The sources changed since the build (its stamp no longer matches them): the start script
    //    remakes it (`--build-only`: the same check, without serving again).
    const serverJs = statSync(join(buildDir, 'bin/server.js')).ino
    await writeFile(join(buildDir, STAMP), JSON.stringify({ ...stamp, fingerprint: 'stale' }))
    const rebuild = spawnSync(
      'npm',
      ['start', '--', `--build-dir=${relative(ROOT, buildDir)}`, '--build-only'],
      { cwd: ROOT, env, encoding: 'utf8', timeout: BOOT_TIMEOUT_MS }
    )
    assert.equal(rebuild.status, 0, `${rebuild.stdout}${rebuild.stderr}`)
    assert.notEqual(readStamp(buildDir)?.fingerprint, 'stale', 'the stale build was remade')
    assert.notEqual(statSync(join(buildDir, 'bin/server.js')).ino, serverJs)
  }).timeout(300_000)
})
