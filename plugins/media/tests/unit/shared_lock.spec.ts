import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { SharedLock } from '#plugins/media/lib/shared_lock'

/** A promise and the function that settles it: tasks held open until the test lets them go. */
function latch() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { open, opened }
}

test.group('SharedLock', () => {
  test('tasks of one key run one after another, in order; other keys do not wait', async ({
    assert,
  }) => {
    const lock = new SharedLock(`quire-test-${process.pid}`)
    const events: string[] = []
    const first = latch()
    const a1 = lock.run('a', async () => {
      events.push('a1 start')
      await first.opened
      events.push('a1 end')
      return 1
    })
    const a2 = lock.run('a', async () => {
      events.push('a2 start')
      return 2
    })
    // Another key runs while a1 is held.
    assert.equal(await lock.run('b', async () => 'b'), 'b')
    assert.notInclude(events, 'a2 start')
    first.open()
    assert.deepEqual(await Promise.all([a1, a2]), [1, 2])
    assert.deepEqual(events, ['a1 start', 'a1 end', 'a2 start'])
  })

  test('a failing task passes its error on and frees the key', async ({ assert }) => {
    const lock = new SharedLock(`quire-test-${process.pid}`)
    await assert.rejects(
      () =>
        lock.run('k', async () => {
          throw new Error('boom')
        }),
      'boom'
    )
    assert.equal(await lock.run('k', async () => 'after'), 'after')
  })

  test('on MySQL/MariaDB the key is a named lock other connections see taken', async ({
    assert,
  }) => {
    const prefix = `quire-test-${process.pid}`
    const lock = new SharedLock(prefix)
    const held = latch()
    const inside = latch()
    const task = lock.run('named', async () => {
      inside.open()
      await held.opened
    })
    await inside.opened
    const [rows] = await db.rawQuery('SELECT IS_FREE_LOCK(?) AS free', [`${prefix}:named`])
    assert.equal(Number(rows[0].free), 0)
    held.open()
    await task
    const [after] = await db.rawQuery('SELECT IS_FREE_LOCK(?) AS free', [`${prefix}:named`])
    assert.equal(Number(after[0].free), 1)
  }).skip(db.primaryConnectionName !== 'mysql', 'needs DB_CONNECTION=mysql (named locks)')
})
