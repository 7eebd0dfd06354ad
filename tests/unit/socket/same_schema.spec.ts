import { test } from '@japa/runner'
import { RpcError } from '#core/rpc/errors'
import { validateWire } from '#core/rpc/wire'
import SendMsg from '#plugins/books/operations/send_msg'
import SendMessage from '#plugins/books/socket/send_message'
import UpdateTableValueOperation from '#plugins/tables/operations/update_table_value'
import UpdateTableValueHandler from '#plugins/tables/socket/update_table_value'

/**
 * An operation and the socket handler that does the same thing read their shared fields with one
 * schema fragment (books' messageFields, tables' cellFields): the same raw value, as a frame or a
 * JSON body carries it, reads the same on both validators, or is refused by both with the same
 * code. (api.php also turns a JSON body's scalars into text first, as PHP would; a frame keeps
 * JSON values: so the values below are given as JSON values, which the socket does receive.)
 */
type Outcome = { ok: true; value: unknown } | { ok: false; code: string; field: unknown }

async function outcome(validator: any, data: Record<string, unknown>, field: string) {
  try {
    const read = await validateWire<Record<string, unknown>>(validator, data)
    return { ok: true, value: read[field] } as Outcome
  } catch (error) {
    if (!(error instanceof RpcError)) throw error
    return { ok: false, code: error.code, field: error.extra.field } as Outcome
  }
}

const TEXT_VALUES: [string, unknown][] = [
  ['a JSON number', 123],
  ['a JSON boolean', true],
  ['null', null],
  ['an object', { a: 1 }],
  ['a list', ['a']],
  ['empty text', ''],
  ['blank text', '   '],
  ['padded text', '  abc  '],
  ['long text', 'x'.repeat(70_000)],
]

test.group('one schema per use case', () => {
  test('sendMsg and socket type 1 read {0} in {1} alike')
    .with(
      ['b_o', 'b_c', 'msg', 'body', 'msgBody', 'bodyHtml', 'msgBodyHTML', 'uuid', 'msgColor']
        .flatMap((field) => TEXT_VALUES.map(([label, value]) => [label, field, value] as const))
        .concat([
          ['a JSON number', 'nbMedias', 3],
          ['digits', 'nbDocs', '2'],
          ['letters', 'nbDocs', 'x'],
          ['an object', 'event', { eventStart: 1 }],
        ])
    )
    .run(async ({ assert }, [, field, value]) => {
      const data = { b_o: 'owner', b_c: 'book', msg: 'hello', [field]: value }
      const onApi = await outcome(SendMsg.validator, data, field)
      const onSocket = await outcome(SendMessage.validator, data, field)
      assert.deepEqual(onSocket, onApi)
    })

  test('updateTableValue and socket type 13 read {0} in {1} alike')
    .with(
      ['b_o', 'rowId', 'value']
        .flatMap((field) => TEXT_VALUES.map(([label, value]) => [label, field, value] as const))
        .concat([
          ['a JSON number', 'rowId', 4294967297],
          ['a JSON number', 'fieldId', 12],
          ['a fraction', 'fieldId', 1.5],
          ['yes', 'bypassUrlTrigger', 'yes'],
          ['2', 'bypassUrlTrigger', 2],
        ])
    )
    .run(async ({ assert }, [, field, value]) => {
      const data = { b_o: 'owner', rowId: 'tmp1', fieldId: 7, value: 'x', [field]: value }
      const onApi = await outcome(UpdateTableValueOperation.validator, data, field)
      const onSocket = await outcome(UpdateTableValueHandler.validator, data, field)
      assert.deepEqual(onSocket, onApi)
    })
})
