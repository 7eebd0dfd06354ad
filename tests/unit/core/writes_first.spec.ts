import { test } from '@japa/runner'
import { setTimeout as sleep } from 'node:timers/promises'
import { Foreground } from '#core/foreground'
import { WritesFirst } from '#core/outbox/writes_first'

/** Keeps the event loop busy for `ms`, in slices that let its timers run (the sampler among them). */
async function busyFor(ms: number) {
  const end = performance.now() + ms
  while (performance.now() < end) {
    const slice = performance.now() + 20
    while (performance.now() < slice) {}
    await sleep(0)
  }
}

test.group('Foreground (writes first)', () => {
  test('a busy event loop while writes are made is saturated; it is not once the writes end', async ({
    assert,
  }) => {
    const foreground = new Foreground({ busy: () => 0, close() {} })
    assert.isFalse(foreground.saturated(0.9), 'nothing sampled before anyone asked')
    foreground.beginWrite()
    await busyFor(200)
    assert.isTrue(foreground.saturated(0.9))
    foreground.endWrite()
    await sleep(150)
    assert.isFalse(foreground.saturated(0.9), 'no write in the last 100 ms')
  })

  test('an idle event loop with a write in flight is saturated only when every core is busy', async ({
    assert,
  }) => {
    let machineBusy = 0
    const foreground = new Foreground({ busy: () => machineBusy, close() {} })
    foreground.saturated(0.9)
    foreground.beginWrite()
    await sleep(150)
    assert.isFalse(foreground.saturated(0.9))
    machineBusy = 0.95
    await sleep(150)
    assert.isTrue(foreground.saturated(0.9), "the CPU a delivery takes is the writers' CPU")
    foreground.endWrite()
  })

  test('busy without writes is not saturated', async ({ assert }) => {
    const foreground = new Foreground({ busy: () => 1, close() {} })
    foreground.saturated(0.5)
    await busyFor(150)
    assert.isFalse(foreground.saturated(0.5))
  })
})

test.group('WritesFirst', () => {
  test('claims everything due unless writes saturate the process; then only what waited long enough', ({
    assert,
  }) => {
    let saturated = false
    const writesFirst = new WritesFirst({ maxDelayMs: 500, threshold: 0.9 }, {
      saturated: (threshold: number) => {
        assert.equal(threshold, 0.9)
        return saturated
      },
    } as any)
    assert.equal(writesFirst.dueBy(10_000), 10_000)
    saturated = true
    assert.equal(writesFirst.dueBy(10_000), 9_500)
    assert.equal(writesFirst.retryMs(), 50)
    assert.equal(new WritesFirst({ maxDelayMs: 20, threshold: 0.9 }).retryMs(), 20)
  })
})
