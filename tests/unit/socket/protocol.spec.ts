import { test } from '@japa/runner'
import { MessageType, parseFrame, refusal } from '#core/socket/protocol'

test.group('socket protocol', () => {
  test('parseFrame accepts JSON objects with an integer type (digit strings too)', ({ assert }) => {
    assert.deepEqual(parseFrame('{"type":9,"o_u":"a"}'), { type: 9, o_u: 'a' })
    assert.deepEqual(parseFrame('{"type":"7"}'), { type: 7 })
  })

  test('parseFrame names why a frame is malformed', ({ assert }) => {
    for (const raw of ['{x', '[1]', '"s"', 'null', '{"type":1.5}', '{"type":"ping"}', '{}']) {
      assert.isString(parseFrame(raw), raw)
    }
  })

  test('refusal answers the ack type of the request, else an error frame', ({ assert }) => {
    const error = { errorCode: 'NOT_FOUND', errorMsg: 'Book not found' }
    assert.deepEqual(refusal({ type: 1, uuid: 'u1', msg: 'hello' }, error), {
      type: 2,
      status: 'nok',
      ...error,
      uuid: 'u1',
    })
    assert.deepEqual(refusal({ type: 9 }, error), { type: 10, status: 'nok', ...error })
    assert.deepEqual(refusal({ type: 11, uuid: 'u', msg: 'clearNotRead' }, error), {
      type: 12,
      status: 'nok',
      ...error,
      uuid: 'u',
      msg: 'clearNotRead',
    })
    assert.deepEqual(refusal({ type: 13, rowId: 'tmp1', fieldId: 5 }, error), {
      type: MessageType.ERROR,
      status: 'nok',
      ...error,
      reqType: 13,
      rowId: 'tmp1',
      fieldId: 5,
    })
    assert.deepEqual(refusal(null, error), { type: 0, status: 'nok', ...error })
  })
})
