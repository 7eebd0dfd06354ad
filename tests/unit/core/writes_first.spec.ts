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
    await busyFor(150)
    assert.isFalse(foreground.saturated(0.5))
  })
})

test.group('WritesFirst', () => {
  test('claims all it has room for unless saturated; then at most its rate, refilled with time', async ({
    assert,
  }) => {
    let saturated = false
    const writesFirst = new WritesFirst({ saturatedRate: 100, threshold: 0.9 }, {
      saturated: () => saturated,
    } as any)
    assert.equal(writesFirst.allowance(100), 100)
    writesFirst.took(100)
    // Not saturated: nothing was counted against the share.
    saturated = true
    assert.equal(writesFirst.allowance(100), 20, 'a fifth of a second of the rate')
    writesFirst.took(20)
    assert.equal(writesFirst.allowance(100), 0)
    assert.closeTo(writesFirst.retryMs(), 200, 5, 'until the bucket is full again')
    await sleep(100)
    assert.equal(writesFirst.allowance(100), 0, 'half full: not yet')
    assert.equal(writesFirst.allowance(5), 5, 'a small claim fits')
    writesFirst.took(5)
    await sleep(Math.max(10, writesFirst.retryMs()) + 20)
    assert.equal(writesFirst.allowance(100), 20)
    writesFirst.took(20)
    saturated = false
    assert.equal(writesFirst.allowance(50), 50)
  })
})
