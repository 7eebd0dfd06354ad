import { test } from '@japa/runner'
import { GroupCommit, type GroupCommitOptions, type Settled } from '#core/services/group_commit'

/**
 * GroupCommit with a commit function the test drives by hand: each call
 * records its batch and waits for the test to settle it. Nothing sleeps; a
 * test waits for the n-th commit call, which GroupCommit makes as soon as it
 * takes a batch.
 */
interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

interface Job {
  name: string
  key?: string
}

interface Call {
  batch: string[]
  /** Answers every job of the batch with `<name>:done`. */
  succeed(): void
  /** Answers the given outcome for each job, in batch order. */
  settle(outcomes: Settled<string>[]): void
  /** Fails the whole batch (the commit function throws). */
  fail(error: unknown): void
}

function harness(options: Partial<GroupCommitOptions<Job, string>> = {}) {
  const calls: Call[] = []
  const arrivals: Deferred<Call>[] = []
  const arrival = (index: number) => (arrivals[index] ??= deferred<Call>())

  const group = new GroupCommit<Job, string>({
    batchSize: 10,
    ...options,
    commit(batch) {
      const done = deferred<Settled<string>[]>()
      const call: Call = {
        batch: batch.map((job) => job.name),
        succeed: () => done.resolve(batch.map((job) => ({ ok: true, value: `${job.name}:done` }))),
        settle: (outcomes) => done.resolve(outcomes),
        fail: (error) => done.reject(error),
      }
      arrival(calls.length).resolve(call)
      calls.push(call)
      return done.promise
    },
  })

  /** A submitted job whose outcome can be read without awaiting it. */
  function submit(name: string, key?: string) {
    const outcome: { state: 'pending' | 'resolved' | 'rejected'; value?: string; error?: unknown } =
      { state: 'pending' }
    const promise = group.submit({ name, key }).then(
      (value) => Object.assign(outcome, { state: 'resolved', value }),
      (error) => Object.assign(outcome, { state: 'rejected', error })
    )
    return { outcome, settled: promise }
  }

  return {
    calls,
    submit,
    /** The n-th commit call (0-based), once GroupCommit has made it. */
    call: (index: number) => arrival(index).promise,
    /** Waits for the n-th commit call and answers every job of it. */
    succeed: (index: number) => arrival(index).promise.then((made) => made.succeed()),
    /** Waits for the n-th commit call and makes it throw. */
    fail: (index: number, error: unknown) =>
      arrival(index).promise.then((made) => made.fail(error)),
  }
}

test.group('GroupCommit: batching', () => {
  test('a job alone is committed at once, in a batch of its own', async ({ assert }) => {
    const { calls, submit, succeed } = harness()
    const job = submit('a')
    assert.deepEqual(
      calls.map((c) => c.batch),
      [['a']],
      'committed without waiting for others'
    )
    await succeed(0)
    await job.settled
    assert.deepEqual(job.outcome, { state: 'resolved', value: 'a:done' })
  })

  test('jobs submitted while a batch runs go together in the next batch', async ({ assert }) => {
    const { calls, submit, call, succeed } = harness()
    const a = submit('a')
    const later = [submit('b'), submit('c'), submit('d')]
    assert.lengthOf(calls, 1, 'b, c and d wait for the running batch')

    await succeed(0)
    await a.settled
    const second = await call(1)
    assert.deepEqual(second.batch, ['b', 'c', 'd'])
    assert.isTrue(
      later.every((job) => job.outcome.state === 'pending'),
      'nothing answered before its batch committed'
    )

    second.succeed()
    await Promise.all(later.map((job) => job.settled))
    assert.deepEqual(
      later.map((job) => job.outcome.value),
      ['b:done', 'c:done', 'd:done']
    )
    assert.lengthOf(calls, 2)
  })

  test('a batch takes at most batchSize jobs, in submission order', async ({ assert }) => {
    const { submit, call } = harness({ batchSize: 2 })
    const jobs = ['a', 'b', 'c', 'd', 'e'].map((name) => submit(name))
    const batches: string[][] = []
    for (let index = 0; index < 3; index++) {
      const next = await call(index)
      batches.push(next.batch)
      next.succeed()
    }
    await Promise.all(jobs.map((job) => job.settled))
    assert.deepEqual(batches, [['a'], ['b', 'c'], ['d', 'e']])
  })
})

test.group('GroupCommit: gather', () => {
  test('with gather, the jobs of one turn of the event loop go in one batch; the next turn gathers again', async ({
    assert,
  }) => {
    const { calls, submit, call, succeed } = harness({ gather: true })
    // Jobs of separate requests read in one turn: submitted one after the other, no await between.
    const first = ['a', 'b', 'c'].map((name) => submit(name))
    assert.lengthOf(calls, 0, 'nothing is committed before the turn ends')
    const batch = await call(0)
    assert.deepEqual(batch.batch, ['a', 'b', 'c'])
    batch.succeed()
    await Promise.all(first.map((job) => job.settled))
    assert.deepEqual(
      first.map((job) => job.outcome.value),
      ['a:done', 'b:done', 'c:done']
    )

    // A later job alone starts a batch of its own on the next turn, jobs of a running batch wait.
    const d = submit('d')
    assert.lengthOf(calls, 1)
    const second = await call(1)
    assert.deepEqual(second.batch, ['d'])
    const e = submit('e')
    await new Promise((resolve) => setImmediate(resolve))
    assert.lengthOf(calls, 2, 'e waits for the running batch')
    second.succeed()
    await d.settled
    await succeed(2)
    await e.settled
    assert.deepEqual(
      calls.map((c) => c.batch),
      [['a', 'b', 'c'], ['d'], ['e']]
    )
  })

  test('without gather the first job of a turn is committed alone', async ({ assert }) => {
    const { calls, submit, succeed } = harness()
    const jobs = ['a', 'b', 'c'].map((name) => submit(name))
    await succeed(0)
    await succeed(1)
    await Promise.all(jobs.map((job) => job.settled))
    assert.deepEqual(
      calls.map((c) => c.batch),
      [['a'], ['b', 'c']]
    )
  })
})

test.group('GroupCommit: concurrency', () => {
  test('by default one batch runs at a time', async ({ assert }) => {
    const { calls, submit, succeed } = harness()
    const jobs = [submit('a'), submit('b')]
    assert.lengthOf(calls, 1)
    await succeed(0)
    await succeed(1)
    await Promise.all(jobs.map((job) => job.settled))
  })

  test('with concurrency 2, a second batch starts while the first runs, and no third', async ({
    assert,
  }) => {
    const { calls, submit, call, succeed } = harness({ concurrency: 2 })
    const a = submit('a')
    const b = submit('b')
    assert.deepEqual(
      calls.map((c) => c.batch),
      [['a'], ['b']],
      'b did not wait for a'
    )
    const c = submit('c')
    const d = submit('d')
    assert.lengthOf(calls, 2, 'c and d wait: two batches are running')

    // The second batch finishing first frees its slot for c and d, while a still runs.
    await succeed(1)
    await b.settled
    const third = await call(2)
    assert.deepEqual(third.batch, ['c', 'd'])
    assert.equal(a.outcome.state, 'pending')

    third.succeed()
    await succeed(0)
    await Promise.all([a, c, d].map((job) => job.settled))
    assert.deepEqual(
      [a, b, c, d].map((job) => job.outcome.value),
      ['a:done', 'b:done', 'c:done', 'd:done']
    )
  })
})

test.group('GroupCommit: per-key order', () => {
  test('a job whose key is in a running batch waits, and so do later jobs of that key; other keys go ahead', async ({
    assert,
  }) => {
    const { calls, submit, call, succeed } = harness({ concurrency: 2, keyOf: (job) => job.key })
    const a1 = submit('a1', 'A')
    const a2 = submit('a2', 'A')
    const b1 = submit('b1', 'B')
    // Two batches may run, but a2's key is in the first: the second takes b1 only.
    assert.deepEqual(
      calls.map((c) => c.batch),
      [['a1'], ['b1']]
    )
    const a3 = submit('a3', 'A')

    await succeed(1)
    await b1.settled
    const b2 = submit('b2', 'B')
    const afterB = await call(2)
    assert.deepEqual(afterB.batch, ['b2'], 'A is still busy: a2 and a3 keep waiting')
    afterB.succeed()
    await b2.settled
    assert.equal(a2.outcome.state, 'pending')

    await succeed(0)
    await a1.settled
    const next = await call(3)
    assert.deepEqual(next.batch, ['a2', 'a3'], 'two jobs of one key share a batch, in order')
    next.succeed()
    await Promise.all([a2, a3].map((job) => job.settled))
    assert.deepEqual(
      [a1, a2, a3].map((job) => job.outcome.value),
      ['a1:done', 'a2:done', 'a3:done']
    )
  })
})

test.group('GroupCommit: failures and outcomes', () => {
  test('each job gets its own outcome from the batch', async ({ assert }) => {
    const { submit, call, succeed } = harness()
    const first = submit('first')
    const jobs = [submit('a'), submit('b'), submit('c')]
    await succeed(0)
    await first.settled
    const refused = new Error('b is refused')
    const second = await call(1)
    second.settle([
      { ok: true, value: 'A' },
      { ok: false, error: refused },
      { ok: true, value: 'C' },
    ])
    await Promise.all(jobs.map((job) => job.settled))
    assert.deepEqual(
      jobs.map((job) => job.outcome),
      [
        { state: 'resolved', value: 'A' },
        { state: 'rejected', error: refused },
        { state: 'resolved', value: 'C' },
      ]
    )
  })

  test('a batch that throws is retried job by job, so one bad job fails alone', async ({
    assert,
  }) => {
    const { calls, submit, call, succeed, fail } = harness()
    const first = submit('first')
    const jobs = [submit('a'), submit('b'), submit('c')]
    await succeed(0)
    await first.settled

    await fail(1, new Error('deadlock'))
    const retries: string[][] = []
    const bad = new Error('b breaks a constraint')
    for (let index = 2; index < 5; index++) {
      const retry = await call(index)
      retries.push(retry.batch)
      if (retry.batch[0] === 'b') retry.fail(bad)
      else retry.succeed()
    }
    await Promise.all(jobs.map((job) => job.settled))

    assert.deepEqual(retries, [['a'], ['b'], ['c']])
    assert.deepEqual(
      jobs.map((job) => job.outcome),
      [
        { state: 'resolved', value: 'a:done' },
        { state: 'rejected', error: bad },
        { state: 'resolved', value: 'c:done' },
      ]
    )
    assert.lengthOf(calls, 5)
  })

  test('retryAlone answering false rejects every job of the batch with its error, without retries', async ({
    assert,
  }) => {
    const seen: unknown[] = []
    const { calls, submit, succeed, fail } = harness({
      retryAlone: (error) => {
        seen.push(error)
        return false
      },
    })
    const first = submit('first')
    const jobs = [submit('a'), submit('b')]
    await succeed(0)
    await first.settled

    const lost = new Error('connection lost')
    await fail(1, lost)
    await Promise.all(jobs.map((job) => job.settled))
    assert.deepEqual(
      jobs.map((job) => job.outcome),
      [
        { state: 'rejected', error: lost },
        { state: 'rejected', error: lost },
      ]
    )
    assert.deepEqual(seen, [lost], 'asked once, with the batch error')
    assert.lengthOf(calls, 2, 'no retry')

    // The queue is still usable after a failed batch.
    const after = submit('after')
    await succeed(2)
    await after.settled
    assert.deepEqual(after.outcome, { state: 'resolved', value: 'after:done' })
  })

  test('a job alone that throws is rejected, without asking retryAlone', async ({ assert }) => {
    let asked = 0
    const { calls, submit, fail } = harness({
      retryAlone: () => {
        asked++
        return true
      },
    })
    const job = submit('a')
    const broken = new Error('broken')
    await fail(0, broken)
    await job.settled
    assert.deepEqual(job.outcome, { state: 'rejected', error: broken })
    assert.equal(asked, 0)
    assert.lengthOf(calls, 1)
  })

  test('a failed batch frees its keys for the next batch', async ({ assert }) => {
    const { submit, call, fail } = harness({ keyOf: (job) => job.key, retryAlone: () => false })
    const a1 = submit('a1', 'A')
    const a2 = submit('a2', 'A')
    await fail(0, new Error('lost'))
    await a1.settled
    const next = await call(1)
    assert.deepEqual(next.batch, ['a2'])
    next.succeed()
    await a2.settled
    assert.equal(a1.outcome.state, 'rejected')
    assert.equal(a2.outcome.state, 'resolved')
  })
})
