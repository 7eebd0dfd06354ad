import { test } from '@japa/runner'
import { Gate } from '#plugins/media/lib/gate'

test.group('Gate (bounded work, no queue)', () => {
  test('admits up to its limit, refuses past it, admits again after a release', ({ assert }) => {
    const gate = new Gate(2)
    const first = gate.tryEnter()
    const second = gate.tryEnter()
    assert.isFunction(first)
    assert.isFunction(second)
    assert.isNull(gate.tryEnter())
    assert.equal(gate.active, 2)
    first!()
    first!() // a second release of one entry frees nothing more
    assert.equal(gate.active, 1)
    const third = gate.tryEnter()
    assert.isFunction(third)
    assert.isNull(gate.tryEnter())
    second!()
    third!()
    assert.equal(gate.active, 0)
  })
})
