import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { JsonText, answerJson, jsonOf, objectJsonWith, readJsonTexts } from '#core/rpc/answer_json'

/** answerJson (app/core/rpc/answer_json.ts) must write exactly what JSON.stringify writes. */
const same = (assert: any, value: unknown) =>
  assert.strictEqual(answerJson(value), JSON.stringify(value))

test.group('answerJson: the text of JSON.stringify, frozen parts written once', () => {
  test('an envelope with nested objects, arrays and every kind of value', ({ assert }) => {
    const prefs = Object.freeze({
      'lang': 'en',
      'slashd': false,
      'nbCol': 0,
      'quote"d': 'é\u2028\ud800',
    })
    const answer = {
      status: 'ok',
      req: 'getUserInfo',
      sstamp: 17957218844284,
      userInfo: {
        'firstTime': false,
        'nbBooks': 3,
        'userPrefs': prefs,
        'rights': Object.freeze({ admin: false, nested: { deep: [1, 2, { x: null }] } }),
        'missing': undefined,
        'fn': () => 1,
        'symbol': Symbol('s'),
        'notANumber': Number.NaN,
        'infinite': Number.POSITIVE_INFINITY,
        'negativeZero': -0,
        'list': [undefined, () => 1, { a: 1 }],
        '10': 'integer-like key first',
        'empty': {},
        'nullPrototype': Object.assign(Object.create(null), { a: 1 }),
        'map': new Map([[1, 2]]),
        'deeper': { level: { three: { four: 'x' } } },
      },
      when: new Date(0),
      at: DateTime.fromMillis(0, { zone: 'utc' }),
      withKey: { toJSON: (key: string) => `called with ${key}` },
      gone: { toJSON: () => undefined },
      __proto__x: 1,
    }
    same(assert, answer)
    same(assert, answer) // a second time, frozen parts from the kept text
    same(assert, {})
    same(assert, { a: undefined })
    same(assert, { toJSON: () => ({ replaced: true }) })
  })

  test('a frozen object holding a mutable one is written anew each time', ({ assert }) => {
    const inner = { count: 1 }
    const part = Object.freeze({ inner })
    const answer = { status: 'ok', userInfo: { part } }
    assert.strictEqual(
      answerJson(answer),
      '{"status":"ok","userInfo":{"part":{"inner":{"count":1}}}}'
    )
    inner.count = 2
    assert.strictEqual(
      answerJson(answer),
      '{"status":"ok","userInfo":{"part":{"inner":{"count":2}}}}'
    )

    // A frozen object with a getter: its value may change, so it is not kept either.
    let calls = 0
    const withGetter = Object.freeze({
      get value() {
        return ++calls
      },
    })
    assert.strictEqual(answerJson({ a: withGetter }), '{"a":{"value":1}}')
    assert.strictEqual(answerJson({ a: withGetter }), '{"a":{"value":2}}')
  })

  test('strings, numbers and booleans: the same text as JSON.stringify, for every code unit', ({
    assert,
  }) => {
    // Strings with nothing to escape are written here without JSON.stringify: each code unit,
    // alone and between letters (controls, quote, backslash, lone and paired surrogates).
    for (let block = 0; block < 0x10000; block += 1024) {
      const alone: Record<string, unknown> = {}
      const between: Record<string, unknown> = {}
      for (let unit = block; unit < block + 1024; unit++) {
        alone[`u${unit}`] = String.fromCharCode(unit)
        between[`u${unit}`] = `a${String.fromCharCode(unit)}b`
      }
      same(assert, alone)
      same(assert, { between, n: block, f: block / 7, even: block % 2048 === 0 })
    }
    same(assert, { pair: '\ud83d\ude00 x', lone: '\ud83d', reversed: '\ude00\ud83d', empty: '' })
    for (const n of [0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, -1.5, 2 ** 53 + 2])
      same(assert, { n, inside: { n } })
    same(assert, { t: true, f: false, inside: { t: true, f: false } })
  })

  test('throws where JSON.stringify throws', ({ assert }) => {
    const cycle: Record<string, unknown> = { a: 1 }
    cycle.self = cycle
    assert.throws(() => answerJson({ status: 'ok', userInfo: { cycle } }))
    assert.throws(() => answerJson({ status: 'ok', big: 10n }))
  })

  test('JsonText is written as it is, and reads back as its value elsewhere', ({ assert }) => {
    const cells = new JsonText('[{"id":1,"value":"a \\"b\\""}]')
    const answer = {
      status: 'ok',
      tableValues: { id: 3, fields: cells, deep: { at: { x: cells } } },
    }
    const text = answerJson(answer)
    assert.strictEqual(text, JSON.stringify(answer))
    assert.deepEqual(JSON.parse(text).tableValues.fields, [{ id: 1, value: 'a "b"' }])
  })

  test("objectJsonWith: the spread object's text, a given key in its place or after", ({
    assert,
  }) => {
    const object = { id: 2, name: 'x"y', values: ['old'], gone: undefined, after: null }
    assert.strictEqual(
      objectJsonWith(object, { values: '[1,2]' }),
      JSON.stringify({ ...object, values: [1, 2] })
    )
    assert.strictEqual(
      objectJsonWith({ id: 2 }, { values: '[]', more: '"m"' }),
      JSON.stringify({ id: 2, values: [], more: 'm' })
    )
    assert.strictEqual(objectJsonWith({}, {}), '{}')
    for (const value of [
      undefined,
      () => 1,
      Symbol('s'),
      Number.NaN,
      -0,
      new Date(0),
      [1, { a: 'é' }],
    ])
      assert.strictEqual(jsonOf(value), JSON.stringify(value))
  })

  test('readJsonTexts: the answer a client parsing it reads; parts without JsonText kept', ({
    assert,
  }) => {
    const untouched = { list: [1, 2], when: new Date(0) }
    const answer = {
      status: 'ok',
      untouched,
      tableValues: { fields: new JsonText('[{"id":3,"values":[]}]'), rowInfos: [] },
      nested: [{ infos: new JsonText('{"8589934593":{"order":1,"index":0}}') }],
    }
    const read = readJsonTexts(answer)
    assert.deepEqual(read.tableValues.fields, [{ id: 3, values: [] }] as any)
    assert.deepEqual(read.nested[0].infos, { '8589934593': { order: 1, index: 0 } } as any)
    assert.strictEqual(read.untouched, untouched)
    assert.instanceOf(answer.tableValues.fields, JsonText)
    assert.strictEqual(readJsonTexts(untouched), untouched)
  })
})
