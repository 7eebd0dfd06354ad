import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { Logger } from '@adonisjs/core/logger'
import probe from '#core/jobs/probe_job'
import { QueueService } from '#core/services/queue_service'
import { hasRedis } from '#tests/helpers/database'
import { handlerSource, makeDriver, removeQueue, untilState } from '#tests/helpers/queue'

/**
 * `node ace queue:work` as real separate processes on Redis: a job whose
 * worker is killed mid-job (SIGKILL: no cleanup at all) runs again on another
 * worker; a worker asked to stop (SIGTERM) finishes its job first.
 */
interface WorkerProcess {
  child: ChildProcess
  pid: number
  output: () => string
  exited: Promise<number | null>
}

const LOCK_MS = 1000

function startWorker(redisPrefix: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['ace', 'queue:work', '--concurrency=1'], {
    cwd: app.makePath(),
    // A short lock so a dead worker's job is taken back within seconds, not the default 30.
    env: { ...process.env, REDIS_PREFIX: redisPrefix, QUEUE_LOCK_MS: String(LOCK_MS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code))
  )
  const worker = { child, pid: child.pid!, output: () => output, exited }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`queue:work did not start within 60 s:\n${output}`))
    }, 60_000)
    child.stdout!.on('data', () => {
      if (output.includes('taking jobs')) {
        clearTimeout(timer)
        resolve(worker)
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`queue:work exited (${code}) before taking jobs:\n${output}`))
    })
  })
}

test.group('queue:work processes (Redis)', (group) => {
  let workers: WorkerProcess[] = []
  let redisPrefix = ''
  let queue: QueueService

  group.each.setup(() => {
    if (!hasRedis()) return
    workers = []
    redisPrefix = `${process.env.REDIS_PREFIX ?? 'quire:'}workers-${randomUUID().slice(0, 8)}:`
    // The same queue the children see, without a worker in this process.
    queue = new QueueService(
      makeDriver('bullmq', { prefix: `${redisPrefix}bull` }),
      handlerSource(new Map([['core.probe', probe]])),
      { attempts: 1, backoffMs: 100, concurrency: 1, shutdownTimeoutMs: 1000 },
      new Logger({ enabled: false, name: 'queue-test', level: 'silent' })
    )
    return async () => {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL')
      await Promise.all(workers.map((worker) => worker.exited))
      await queue.shutdown()
      await removeQueue(`${redisPrefix}bull`)
    }
  })

  const startedJob = (id: string) => untilState(queue, id, 'active', 20_000)

  test('a job survives its worker being killed mid-job and runs on another worker', async ({
    assert,
  }) => {
    const first = await startWorker(redisPrefix)
    workers.push(first)
    // One attempt only: a crash is not a failure, so it must not use up the job's attempts.
    const { id } = await queue.dispatch('core.probe', { sleepMs: 4000 }, { attempts: 1 })
    await startedJob(id)

    first.child.kill('SIGKILL')
    await first.exited
    const orphaned = await queue.status(id)
    assert.equal(
      orphaned?.state,
      'active',
      'the dead worker still holds the job until its lock expires'
    )

    const second = await startWorker(redisPrefix)
    workers.push(second)
    const done = await untilState(queue, id, 'completed', 30_000)
    const result = done.result as { pid: number; attempt: number }
    assert.equal(result.pid, second.pid, 'the second worker ran it')
    assert.equal(result.attempt, 2, 'the handler was told this is its second run')
    assert.equal(done.attemptsStarted, 2)
    assert.equal(done.attemptsFailed, 0)
    assert.lengthOf(await queue.deadLetters(), 0)

    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0, second.output())
  })
    .skip(!hasRedis(), 'needs Redis: set REDIS_HOST to run queue:work processes')
    .timeout(120_000)

  test('SIGTERM lets the running job finish before the worker exits', async ({ assert }) => {
    const worker = await startWorker(redisPrefix)
    workers.push(worker)
    const { id } = await queue.dispatch('core.probe', { sleepMs: 1500 }, { attempts: 1 })
    await startedJob(id)

    worker.child.kill('SIGTERM')
    assert.equal(await worker.exited, 0, worker.output())
    const status = await queue.status(id)
    assert.equal(status?.state, 'completed', worker.output())
    assert.equal((status?.result as { pid: number }).pid, worker.pid)
    assert.equal(status?.attemptsStarted, 1)
  })
    .skip(!hasRedis(), 'needs Redis: set REDIS_HOST to run queue:work processes')
    .timeout(120_000)
})

test.group('queue:work without Redis', () => {
  test('refuses to start and says why', async ({ assert }) => {
    // Empty rather than absent: a REDIS_HOST in a .env file must not fill the gap.
    const env: NodeJS.ProcessEnv = { ...process.env, REDIS_HOST: '' }
    const child = spawn(process.execPath, ['ace', 'queue:work'], {
      cwd: app.makePath(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const code = await new Promise((resolve) => child.once('exit', resolve))
    assert.equal(code, 1)
    assert.include(output, 'queue:work needs Redis (set REDIS_HOST)')
  }).timeout(60_000)
})
