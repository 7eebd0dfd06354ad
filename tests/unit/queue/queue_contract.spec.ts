import { test } from '@japa/runner'
import { PermanentJobError } from '#core/jobs/types'
import { hasRedis } from '#tests/helpers/database'
import {
  makeQueue,
  sleep,
  stateOf,
  untilState,
  waitFor,
  type DriverKind,
} from '#tests/helpers/queue'

/**
 * The same behaviour from both drivers: the in-process queue (always) and
 * BullMQ (when REDIS_HOST is set; skipped, visibly, otherwise).
 */
for (const kind of ['memory', 'bullmq'] as DriverKind[]) {
  const skip = kind === 'bullmq' && !hasRedis()
  const reason = 'needs Redis: set REDIS_HOST to run the BullMQ driver tests'

  test.group(`job queue contract (${kind})`, (group) => {
    let harness: ReturnType<typeof makeQueue>

    group.each.setup(async () => {
      if (skip) return
      harness = makeQueue(kind)
      await harness.queue.startWorker()
    })
    group.each.teardown(async () => {
      if (!skip) await harness.close()
    })

    test('runs a dispatched job with a JSON copy of its payload', async ({ assert }) => {
      const seen: unknown[] = []
      harness.handlers.set('test.echo', async (payload, job) => {
        seen.push({ payload, job })
        return { doubled: (payload as { n: number }).n * 2 }
      })
      const payload = { n: 21, when: new Date('2024-01-02T03:04:05Z') }
      const { id, duplicate } = await harness.queue.dispatch('test.echo', payload)
      assert.isFalse(duplicate)

      const status = await untilState(harness.queue, id, 'completed')
      assert.deepEqual(status.result, { doubled: 42 })
      assert.equal(status.attemptsStarted, 1)
      assert.deepEqual(seen, [
        {
          payload: { n: 21, when: '2024-01-02T03:04:05.000Z' },
          job: { id, attempt: 1, name: 'test.echo' },
        },
      ])
    })
      .skip(skip, reason)
      .timeout(15_000)

    test('retries a failing job with exponential backoff, then completes it', async ({
      assert,
    }) => {
      const runs: { attempt: number; at: number }[] = []
      harness.handlers.set('test.flaky', async (_payload, job) => {
        runs.push({ attempt: job.attempt, at: Date.now() })
        if (job.attempt < 3) throw new Error(`boom ${job.attempt}`)
        return 'ok'
      })
      const { id } = await harness.queue.dispatch('test.flaky', {}, { attempts: 3, backoff: 100 })
      const status = await untilState(harness.queue, id, 'completed', 10_000)
      assert.deepEqual(
        runs.map((run) => run.attempt),
        [1, 2, 3]
      )
      assert.equal(status.attemptsFailed, 2)
      // 100 ms before the second run, 200 ms before the third (some slack for timers).
      assert.isAtLeast(runs[1].at - runs[0].at, 90)
      assert.isAtLeast(runs[2].at - runs[1].at, 190)
    })
      .skip(skip, reason)
      .timeout(15_000)

    test('moves a job that fails every attempt to the dead-letter list, and retries it from there', async ({
      assert,
    }) => {
      let healed = false
      let runs = 0
      harness.handlers.set('test.broken', async () => {
        runs++
        if (!healed) throw new Error('the remote end is down')
        return 'delivered'
      })
      const { id } = await harness.queue.dispatch(
        'test.broken',
        { to: 'x' },
        { attempts: 2, backoff: 10 }
      )
      await untilState(harness.queue, id, 'dead', 10_000)
      assert.equal(runs, 2)

      const dead = await harness.queue.deadLetters()
      assert.lengthOf(dead, 1)
      assert.equal(dead[0].id, id)
      assert.equal(dead[0].name, 'test.broken')
      assert.deepEqual(dead[0].payload, { to: 'x' })
      assert.equal(dead[0].attemptsFailed, 2)
      assert.equal(dead[0].error, 'the remote end is down')
      assert.instanceOf(dead[0].failedAt, Date)

      healed = true
      assert.isTrue(await harness.queue.retryDead(id))
      const status = await untilState(harness.queue, id, 'completed', 10_000)
      assert.equal(status.result, 'delivered')
      assert.equal(status.attemptsStarted, 1, 'a retried dead job starts with fresh attempts')
      assert.lengthOf(await harness.queue.deadLetters(), 0)
      assert.isFalse(await harness.queue.retryDead(id), 'only dead jobs can be retried')
    })
      .skip(skip, reason)
      .timeout(20_000)

    test('a permanent failure skips the remaining attempts; purge forgets dead jobs', async ({
      assert,
    }) => {
      let runs = 0
      harness.handlers.set('test.gone', async () => {
        runs++
        throw new PermanentJobError('the book was deleted')
      })
      const first = await harness.queue.dispatch('test.gone', {}, { attempts: 5 })
      const second = await harness.queue.dispatch('test.gone', {}, { attempts: 5 })
      for (const { id } of [first, second]) {
        await untilState(harness.queue, id, 'dead', 10_000)
      }
      assert.equal(runs, 2)
      const dead = await harness.queue.deadLetters()
      assert.sameMembers(
        dead.map((job) => job.id),
        [first.id, second.id]
      )
      assert.equal(dead[0].error, 'the book was deleted')
      assert.equal(await harness.queue.purgeDead(), 2)
      assert.lengthOf(await harness.queue.deadLetters(), 0)
    })
      .skip(skip, reason)
      .timeout(15_000)

    test('an idempotency key adds one job, even after that job has run', async ({ assert }) => {
      let runs = 0
      harness.handlers.set('test.once', async () => {
        runs++
      })
      const first = await harness.queue.dispatch('test.once', {}, { idempotencyKey: 'hook:7:123' })
      const again = await harness.queue.dispatch('test.once', {}, { idempotencyKey: 'hook:7:123' })
      assert.isFalse(first.duplicate)
      assert.deepEqual(again, { id: first.id, duplicate: true })

      await untilState(harness.queue, first.id, 'completed')
      const later = await harness.queue.dispatch('test.once', {}, { idempotencyKey: 'hook:7:123' })
      assert.deepEqual(later, { id: first.id, duplicate: true })

      const other = await harness.queue.dispatch('test.once', {}, { idempotencyKey: 'hook:7:124' })
      assert.isFalse(other.duplicate)
      assert.notEqual(other.id, first.id)
      await untilState(harness.queue, other.id, 'completed')
      assert.equal(runs, 2)
      // No job hides behind a duplicate answer: the queue holds exactly the two that ran.
      assert.deepEqual(await harness.queue.counts(), {
        waiting: 0,
        delayed: 0,
        active: 0,
        completed: 2,
        dead: 0,
      })
    })
      .skip(skip, reason)
      .timeout(15_000)

    test('a delayed job waits for its time', async ({ assert }) => {
      let ranAt = 0
      harness.handlers.set('test.later', async () => {
        ranAt = Date.now()
      })
      const dispatchedAt = Date.now()
      const { id } = await harness.queue.dispatch('test.later', {}, { delay: 600 })
      assert.equal(await stateOf(harness.queue, id), 'delayed')
      assert.equal(ranAt, 0)
      await untilState(harness.queue, id, 'completed', 5000)
      // A lower bound only: a delay is a promise not to run sooner, never a deadline.
      assert.isAtLeast(ranAt - dispatchedAt, 590)
    })
      .skip(skip, reason)
      .timeout(15_000)

    test('runs at most `concurrency` jobs at once', async ({ assert }) => {
      let running = 0
      let peak = 0
      // Every job holds its slot until the test opens the gate: the worker's four slots fill up
      // however slow the machine, and nothing depends on how long a job takes.
      let open!: () => void
      const gate = new Promise<void>((resolve) => (open = resolve))
      harness.handlers.set('test.slow', async () => {
        running++
        peak = Math.max(peak, running)
        await gate
        running--
      })
      const ids = []
      for (let i = 0; i < 10; i++) {
        const { id } = await harness.queue.dispatch('test.slow', { i })
        ids.push(id)
      }
      await waitFor(() => running === 4, 10_000, 'four jobs running side by side')
      assert.deepInclude(
        await harness.queue.counts(),
        { active: 4, waiting: 6 },
        'four slots taken, the other six jobs wait'
      )
      open()
      for (const id of ids) {
        await untilState(harness.queue, id, 'completed', 10_000)
      }
      assert.equal(peak, 4, 'never more than the four slots')
    })
      .skip(skip, reason)
      .timeout(20_000)

    test('shutdown lets a running job finish, then refuses new jobs', async ({ assert }) => {
      let finished = false
      let started = false
      harness.handlers.set('test.long', async () => {
        started = true
        await sleep(400)
        finished = true
        return 'done'
      })
      const { id } = await harness.queue.dispatch('test.long', {})
      await waitFor(() => started)
      await harness.queue.shutdown(5000)
      assert.isTrue(finished, 'the running job finished before shutdown returned')
      assert.isFalse(harness.queue.working)
      await assert.rejects(() => harness.queue.dispatch('test.long', {}), /shut down/)
      if (kind === 'memory') assert.equal(await stateOf(harness.queue, id), 'completed')
    })
      .skip(skip, reason)
      .timeout(15_000)

    test('refuses an undeclared job name, bad options and a payload that is not JSON', async ({
      assert,
    }) => {
      harness.handlers.set('test.known', async () => null)
      await assert.rejects(
        () => harness.queue.dispatch('test.unknown', {}),
        /No plugin declares the job "test.unknown"/
      )
      await assert.rejects(
        () => harness.queue.dispatch('test.known', {}, { attempts: 0 }),
        /attempts must be/
      )
      await assert.rejects(
        () => harness.queue.dispatch('test.known', {}, { delay: -1 }),
        /delay must be/
      )
      await assert.rejects(
        () => harness.queue.dispatch('test.known', {}, { idempotencyKey: '' }),
        /idempotency key/
      )
      await assert.rejects(() => harness.queue.dispatch('test.known', { big: 1n }), /BigInt/)
      assert.deepEqual(await harness.queue.counts(), {
        waiting: 0,
        delayed: 0,
        active: 0,
        completed: 0,
        dead: 0,
      })
    })
      .skip(skip, reason)
      .timeout(15_000)
  })
}
