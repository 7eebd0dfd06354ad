import { test } from '@japa/runner'
import vine from '@vinejs/vine'
import { decodeForm } from '#core/rpc/params'
import { RpcError } from '#core/rpc/errors'
import {
  flag,
  flagValue,
  idList,
  int,
  list,
  listOf,
  looseText,
  object,
  stamp,
  text,
  validateWire,
} from '#core/rpc/wire'

/**
 * The one set of wire rules (#core/rpc/wire), value by value: what each rule
 * accepts (and reads it as), what it refuses (INVALID_PARAMETER) and what
 * counts as not given (MISSING_PARAMETER when required, absent when optional).
 * api.php hands the rules text (every leaf of a form or JSON body is a
 * string); the socket hands them JSON values: both are covered.
 */

type Rule = Parameters<typeof vine.object>[0][string]

/** The field `v` through a rule, required and optional: the value read, or the refusal's code. */
async function verdict(rule: () => Rule, value: unknown) {
  const required = vine.compile(vine.object({ v: rule() }))
  try {
    const out = (await validateWire<{ v: unknown }>(required, { v: value })) as { v: unknown }
    return { ok: true as const, value: out.v }
  } catch (error) {
    if (!(error instanceof RpcError)) throw error
    return { ok: false as const, code: error.code, field: error.extra.field }
  }
}

async function optional(rule: () => any, value: unknown) {
  const validator = vine.compile(vine.object({ v: rule().optional() }))
  const out = (await validateWire(validator, { v: value })) as Record<string, unknown>
  return out
}

const TWO_POW_63 = 2 ** 63

test.group('wire: flag', () => {
  test('accepts {value} as {expected}')
    .with([
      { value: true, expected: true },
      { value: false, expected: false },
      { value: 1, expected: true },
      { value: 0, expected: false },
      { value: 'true', expected: true },
      { value: 'FALSE', expected: false },
      { value: '1', expected: true },
      { value: '0', expected: false },
      { value: 'on', expected: true },
      { value: 'Off', expected: false },
      { value: 'yes', expected: true },
      { value: 'NO', expected: false },
      { value: ' yes ', expected: true },
    ])
    .run(async ({ assert }, { value, expected }) => {
      assert.deepEqual(await verdict(flag, value), { ok: true, value: expected })
    })

  test('refuses {value} as INVALID_PARAMETER')
    .with([
      { value: 'maybe' },
      { value: 'y' },
      { value: 2 },
      { value: -1 },
      { value: Number.NaN },
      { value: [true] },
      { value: { a: true } },
    ])
    .run(async ({ assert }, { value }) => {
      assert.deepEqual(await verdict(flag, value), {
        ok: false,
        code: 'INVALID_PARAMETER',
        field: 'v',
      })
    })

  test('empty text and null are not given', async ({ assert }) => {
    for (const value of ['', null, undefined]) {
      assert.deepEqual(await verdict(flag, value), {
        ok: false,
        code: 'MISSING_PARAMETER',
        field: 'v',
      })
      assert.notProperty(await optional(flag, value), 'v')
    }
  })

  test('flagValue: undefined when absent, null when not a boolean', ({ assert }) => {
    assert.isTrue(flagValue('YES'))
    assert.isFalse(flagValue(0))
    assert.isUndefined(flagValue(''))
    assert.isUndefined(flagValue(null))
    assert.isNull(flagValue('maybe'))
    assert.isNull(flagValue(2))
    assert.isNull(flagValue([1]))
  })
})

test.group('wire: int and stamp', () => {
  test('int accepts {value} as {expected}')
    .with([
      { value: 42, expected: 42 },
      { value: '42', expected: 42 },
      { value: ' 42 ', expected: 42 },
      { value: -7, expected: -7 },
      { value: '-7', expected: -7 },
      { value: '007', expected: 7 },
      { value: '5.0', expected: 5 },
      { value: Number.MAX_SAFE_INTEGER, expected: Number.MAX_SAFE_INTEGER },
      { value: String(Number.MIN_SAFE_INTEGER), expected: Number.MIN_SAFE_INTEGER },
    ])
    .run(async ({ assert }, { value, expected }) => {
      assert.deepEqual(await verdict(int, value), { ok: true, value: expected })
    })

  test('int refuses {label} as INVALID_PARAMETER')
    .with([
      { label: 'letters', value: 'abc' },
      { label: 'digits then letters', value: '4x' },
      { label: 'hex', value: '0x10' },
      { label: 'an exponent', value: '1e3' },
      { label: 'a fraction', value: 1.5 },
      { label: 'a fraction as text', value: '1.5' },
      { label: 'a boolean', value: true },
      { label: 'an array', value: [1] },
      { label: 'an object', value: { n: 1 } },
      { label: 'NaN', value: Number.NaN },
      { label: 'Infinity', value: Number.POSITIVE_INFINITY },
      { label: '2^63', value: TWO_POW_63 },
      { label: '2^63 as digits', value: '9223372036854775808' },
      { label: 'one past the safe range', value: String(Number.MAX_SAFE_INTEGER + 2) },
    ])
    .run(async ({ assert }, { value }) => {
      assert.deepEqual(await verdict(int, value), {
        ok: false,
        code: 'INVALID_PARAMETER',
        field: 'v',
      })
    })

  test('stamp accepts 0 and positive integers, refuses negatives', async ({ assert }) => {
    assert.deepEqual(await verdict(stamp, 0), { ok: true, value: 0 })
    assert.deepEqual(await verdict(stamp, '0'), { ok: true, value: 0 })
    assert.deepEqual(await verdict(stamp, '123'), { ok: true, value: 123 })
    assert.deepEqual(await verdict(stamp, 123), { ok: true, value: 123 })
    for (const value of [-1, '-1', TWO_POW_63, '9223372036854775808', 'abc', [5], true, 0.5]) {
      assert.deepEqual(
        await verdict(stamp, value),
        { ok: false, code: 'INVALID_PARAMETER', field: 'v' },
        String(value)
      )
    }
  })

  test('empty or blank text and null are not given', async ({ assert }) => {
    for (const rule of [int, stamp]) {
      for (const value of ['', '   ', null, undefined]) {
        assert.deepEqual(await verdict(rule, value), {
          ok: false,
          code: 'MISSING_PARAMETER',
          field: 'v',
        })
        assert.notProperty(await optional(rule, value), 'v')
      }
    }
  })
})

test.group('wire: text and looseText', () => {
  test('text trims, and reads a JSON number or boolean as its text', async ({ assert }) => {
    assert.deepEqual(await verdict(text, 'abc'), { ok: true, value: 'abc' })
    assert.deepEqual(await verdict(text, '  abc '), { ok: true, value: 'abc' })
    assert.deepEqual(await verdict(text, 12), { ok: true, value: '12' })
    assert.deepEqual(await verdict(text, false), { ok: true, value: 'false' })
  })

  test('text refuses arrays and objects', async ({ assert }) => {
    for (const value of [['a'], { a: 1 }]) {
      assert.deepEqual(await verdict(text, value), {
        ok: false,
        code: 'INVALID_PARAMETER',
        field: 'v',
      })
    }
  })

  test('text: empty or blank text and null are not given', async ({ assert }) => {
    for (const value of ['', '  ', null, undefined]) {
      assert.deepEqual(await verdict(text, value), {
        ok: false,
        code: 'MISSING_PARAMETER',
        field: 'v',
      })
      assert.notProperty(await optional(text, value), 'v')
    }
  })

  test('looseText keeps the text as sent (blanks, empty)', async ({ assert }) => {
    assert.deepEqual(await verdict(looseText, '  a b '), { ok: true, value: '  a b ' })
    assert.deepEqual(await verdict(looseText, ''), { ok: true, value: '' })
    assert.deepEqual(await verdict(looseText, 3.5), { ok: true, value: '3.5' })
    assert.deepEqual(await verdict(looseText, true), { ok: true, value: 'true' })
    assert.deepEqual(await verdict(looseText, { a: 1 }), {
      ok: false,
      code: 'INVALID_PARAMETER',
      field: 'v',
    })
    assert.deepEqual(await verdict(looseText, ['a']), {
      ok: false,
      code: 'INVALID_PARAMETER',
      field: 'v',
    })
    assert.deepEqual(await verdict(looseText, null), {
      ok: false,
      code: 'MISSING_PARAMETER',
      field: 'v',
    })
  })
})

test.group('wire: object', () => {
  test('a JSON object string, a JSON object and bracket form agree', async ({ assert }) => {
    const expected = { ok: true, value: { 12: 'x', 13: 'y' } }
    assert.deepEqual(await verdict(object, '{"12":"x","13":"y"}'), expected)
    assert.deepEqual(await verdict(object, ' {"12":"x","13":"y"} '), expected)
    assert.deepEqual(await verdict(object, { 12: 'x', 13: 'y' }), expected)
    assert.deepEqual(await verdict(object, decodeForm('v[12]=x&v[13]=y').v), expected)
  })

  test('a list becomes an object keyed by position', async ({ assert }) => {
    assert.deepEqual(await verdict(object, '["a","b"]'), { ok: true, value: { 0: 'a', 1: 'b' } })
    assert.deepEqual(await verdict(object, ['a']), { ok: true, value: { 0: 'a' } })
  })

  test('refuses {label} as INVALID_PARAMETER')
    .with([
      { label: 'garbage text', value: 'garbage' },
      { label: 'unparsable JSON', value: '{"a":' },
      { label: 'a JSON number as text', value: '5' },
      { label: 'a number', value: 5 },
      { label: 'a boolean', value: true },
    ])
    .run(async ({ assert }, { value }) => {
      assert.deepEqual(await verdict(object, value), {
        ok: false,
        code: 'INVALID_PARAMETER',
        field: 'v',
      })
    })

  test('empty text and null are not given', async ({ assert }) => {
    for (const value of ['', '  ', null, undefined]) {
      assert.deepEqual(await verdict(object, value), {
        ok: false,
        code: 'MISSING_PARAMETER',
        field: 'v',
      })
      assert.notProperty(await optional(object, value), 'v')
    }
  })
})

test.group('wire: list, listOf, idList', () => {
  test('every list form reads as an array', async ({ assert }) => {
    const expected = { ok: true, value: ['a', 'b'] }
    assert.deepEqual(await verdict(list, ['a', 'b']), expected)
    assert.deepEqual(await verdict(list, '["a","b"]'), expected)
    assert.deepEqual(await verdict(list, 'a, b'), expected)
    assert.deepEqual(await verdict(list, decodeForm('v[0]=a&v[1]=b').v), expected)
    assert.deepEqual(await verdict(list, 'a'), { ok: true, value: ['a'] })
    assert.deepEqual(await verdict(list, 7), { ok: true, value: [7] })
  })

  test('bracket form is read in numeric key order', async ({ assert }) => {
    const bracket = decodeForm('v[10]=k&v[2]=c&v[0]=a').v
    assert.deepEqual(await verdict(list, bracket), { ok: true, value: ['a', 'c', 'k'] })
  })

  test('listOf checks each item with its rule', async ({ assert }) => {
    const flags = () => listOf(flag())
    assert.deepEqual(await verdict(flags, 'yes,0,on'), { ok: true, value: [true, false, true] })
    const refused = await verdict(flags, 'yes,maybe')
    assert.equal(refused.ok ? '' : refused.code, 'INVALID_PARAMETER')
  })

  test('idList reads ids in any form and refuses non-ids', async ({ assert }) => {
    assert.deepEqual(await verdict(idList, '1,2,3'), { ok: true, value: [1, 2, 3] })
    assert.deepEqual(await verdict(idList, '[4,"5"]'), { ok: true, value: [4, 5] })
    assert.deepEqual(await verdict(idList, 6), { ok: true, value: [6] })
    assert.deepEqual(await verdict(idList, decodeForm('v[0]=7&v[1]=8').v), {
      ok: true,
      value: [7, 8],
    })
    for (const value of ['1,abc', '-1', [TWO_POW_63], '[1.5]', [[1]]]) {
      const refused = await verdict(idList, value)
      assert.equal(refused.ok ? '' : refused.code, 'INVALID_PARAMETER', JSON.stringify(value))
    }
  })

  test('empty text and null are not given', async ({ assert }) => {
    for (const rule of [list, idList]) {
      for (const value of ['', null, undefined]) {
        assert.deepEqual(await verdict(rule, value), {
          ok: false,
          code: 'MISSING_PARAMETER',
          field: 'v',
        })
      }
    }
  })
})

test.group('wire: validateWire', () => {
  const validator = vine.compile(vine.object({ a: stamp(), b: flag().optional() }))

  test('a missing required value is MISSING_PARAMETER naming it', async ({ assert }) => {
    const error = (await validateWire(validator, {}).catch((caught) => caught)) as RpcError
    assert.instanceOf(error, RpcError)
    assert.equal(error.code, 'MISSING_PARAMETER')
    assert.equal(error.message, 'Missing parameter: a')
    assert.equal(error.extra.field, 'a')
  })

  test('a refused value is INVALID_PARAMETER naming the field', async ({ assert }) => {
    const error = (await validateWire(validator, { a: '1', b: 'maybe' }).catch(
      (caught) => caught
    )) as RpcError
    assert.instanceOf(error, RpcError)
    assert.equal(error.code, 'INVALID_PARAMETER')
    assert.match(error.message, /^Invalid parameter b: /)
    assert.equal(error.extra.field, 'b')
  })

  test('answers the values read, without undeclared fields', async ({ assert }) => {
    assert.deepEqual(await validateWire(validator, { a: '3', b: 'yes', c: 'extra' }), {
      a: 3,
      b: true,
    })
  })
})
