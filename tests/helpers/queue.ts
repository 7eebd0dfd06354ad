import { randomUUID } from 'node:crypto'
import { Queue } from 'bullmq'
import { Logger } from '@adonisjs/core/logger'
import queueConfig from '#config/queue'
import type { JobHandler } from '#core/plugins/define_plugin'
import type { JobState, JobStatus, QueueDriver } from '#core/jobs/types'
import { MemoryQueueDriver } from '#core/jobs/memory_queue_driver'
import { BullMqQueueDriver } from '#core/jobs/bullmq_queue_driver'
import { QueueService, type HandlerSource } from '#core/services/queue_service'

export type DriverKind = 'memory' | 'bullmq'

/** Dead-lettered jobs log errors on purpose in these tests: keep the output readable. */
const quiet = new Logger({ enabled: false, name: 'queue-test', level: 'silent' })

/**
 * A Redis key prefix of its own, so a test queue never meets the app's jobs,
 * the inline worker of the test process, or another test's queue.
 */
export function isolatedPrefix() {
  return `${process.env.REDIS_PREFIX ?? 'quire:'}test-${randomUUID().slice(0, 8)}:bull`
}

export function makeDriver(
  kind: DriverKind,
  options: { prefix?: string; idempotencyTtlMs?: number; lockMs?: number } = {}
): QueueDriver {
  if (kind === 'memory') {
    return new MemoryQueueDriver({
      idempotencyTtlMs: options.idempotencyTtlMs ?? 60_000,
      deadLetterLimit: 100,
      logger: quiet,
    })
  }
  return new BullMqQueueDriver({
    connection: queueConfig.redis.connection,
    prefix: options.prefix ?? isolatedPrefix(),
    queueName: queueConfig.redis.queueName,
    idempotencyTtlMs: options.idempotencyTtlMs ?? 60_000,
    lockMs: options.lockMs ?? 5000,
    logger: quiet,
  })
}

/** Handlers defined by the test itself instead of plugin manifests. */
export function handlerSource(handlers: Map<string, JobHandler>): HandlerSource {
  return async () =>
    new Map(
      [...handlers.keys()].map((name) => [
        name,
        { pluginId: 'test', load: async () => ({ default: handlers.get(name)! }) },
      ])
    )
}

/** A queue service over a fresh, isolated driver, with test-defined handlers. */
export function makeQueue(kind: DriverKind, options: { idempotencyTtlMs?: number } = {}) {
  const prefix = isolatedPrefix()
  const handlers = new Map<string, JobHandler>()
  const driver = makeDriver(kind, { prefix, ...options })
  const queue = new QueueService(
    driver,
    handlerSource(handlers),
    { attempts: 3, backoffMs: 20, concurrency: 4, shutdownTimeoutMs: 5000 },
    quiet
  )
  return {
    queue,
    handlers,
    async close() {
      await queue.shutdown()
      if (kind === 'bullmq') await removeQueue(prefix)
    },
  }
}

/** Deletes every key of a test queue from Redis. */
export async function removeQueue(prefix: string) {
  const queue = new Queue(queueConfig.redis.queueName, {
    connection: queueConfig.redis.connection,
    prefix,
  })
  await queue.obliterate({ force: true })
  await queue.close()
}

/** Polls until `check` answers something truthy, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  timeoutMs = 5000,
  what = 'condition'
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(20)
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls a job until it reaches `state`; answers its status then. */
export function untilState(
  queue: Pick<QueueService, 'status'>,
  id: string,
  state: JobState,
  timeoutMs = 5000
): Promise<JobStatus> {
  return waitFor(
    async () => {
      const status = await queue.status(id)
      return status?.state === state ? status : null
    },
    timeoutMs,
    `job ${id} to be ${state}`
  )
}

/** The current state of a job (null when unknown). */
export async function stateOf(queue: Pick<QueueService, 'status'>, id: string) {
  const status = await queue.status(id)
  return status?.state ?? null
}
