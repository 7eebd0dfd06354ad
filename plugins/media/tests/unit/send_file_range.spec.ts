import { test } from '@japa/runner'
import { parseRange } from '#plugins/media/http/send_file'

test.group('send_file: Range parsing (RFC 9110 14.1-14.2)', () => {
  test('single ranges: closed, open, suffix; clamped to the end', ({ assert }) => {
    assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 })
    assert.deepEqual(parseRange(' bytes=90- ', 100), { start: 90, end: 99 })
    assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 })
    assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 })
    assert.deepEqual(parseRange('bytes=50-5000', 100), { start: 50, end: 99 })
    assert.deepEqual(parseRange('bytes=5-5', 100), { start: 5, end: 5 })
  })

  test('absent, malformed, several ranges or invalid (last before first): ignored', ({
    assert,
  }) => {
    for (const header of [
      undefined,
      '',
      'bytes=-',
      'bytes=9-0',
      'bytes=0-1,5-6',
      'items=0-1',
      'bytes=a-b',
      'bytes 0-1',
    ])
      assert.isNull(parseRange(header, 100), String(header))
  })

  test('valid but past the end, or an empty suffix: unsatisfiable', ({ assert }) => {
    assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable')
    assert.equal(parseRange('bytes=150-200', 100), 'unsatisfiable')
    assert.equal(parseRange('bytes=-0', 100), 'unsatisfiable')
    assert.equal(parseRange('bytes=0-', 0), 'unsatisfiable')
  })
})
