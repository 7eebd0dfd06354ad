import { test } from '@japa/runner'
import qs from 'qs'
import { decodeForm, mergeParams, parseQuery, stringifyLeaves } from '#core/rpc/params'
import { parseRestrictions } from '#core/auth/restrictions'
import { RpcError } from '#core/rpc/errors'

test.group('PHP bracket notation', () => {
  test('numeric keys stay keys, never compacted arrays', ({ assert }) => {
    assert.deepEqual(decodeForm('fieldValues[123]=x&fieldValues[7]=y'), {
      fieldValues: { 123: 'x', 7: 'y' },
    })
    assert.deepEqual(decodeForm('rows[tmp1][123]=x'), { rows: { tmp1: { 123: 'x' } } })
    assert.deepEqual(decodeForm('rows[0]=5&rows[1]=6'), { rows: { 0: '5', 1: '6' } })
  })

  test('deep nesting decodes', ({ assert }) => {
    const decoded = decodeForm(
      'filterRowIds[applyViewFilters][filterGroup][filters][0][field_id]=7&filterRowIds[applyViewFilters][filterGroup][operator]=and'
    )
    assert.deepEqual(decoded, {
      filterRowIds: {
        applyViewFilters: { filterGroup: { filters: { 0: { field_id: '7' } }, operator: 'and' } },
      },
    })
  })

  test('`+` is a space, a repeated key keeps its last value', ({ assert }) => {
    assert.deepEqual(decodeForm('msg=hello+world&a=1&a=2'), { msg: 'hello world', a: '2' })
  })

  test('prototype keys are refused', ({ assert }) => {
    const decoded = decodeForm('__proto__[polluted]=1&constructor[prototype][x]=1')
    assert.isUndefined(({} as Record<string, unknown>).polluted)
    assert.notProperty(decoded, '__proto__')
  })

  test('flat forms are decoded without qs, exactly as qs decodes them', ({ assert }) => {
    // The options decodeForm gives qs (params.ts QS_OPTIONS).
    const viaQs = (text: string) =>
      qs.parse(text, {
        parseArrays: false,
        depth: 12,
        parameterLimit: 100_000,
        duplicates: 'last',
        allowPrototypes: false,
        plainObjects: false,
        charset: 'utf-8',
      })
    const texts = [
      '',
      '&',
      '&&a=1&&',
      'a',
      'a=',
      '=b',
      '=',
      'a=b=c',
      'a=%zz',
      '%zz=1',
      'a=1+2',
      'a+b=c',
      'toString=1&b=2',
      'hasOwnProperty&x',
      'a=%E2%9C%93',
      'x=a%26b&y=%3D',
      'k&=v&=&k2',
      'req=getUserInfo&version=6.49q%2F6.49&o_u=ada%40example.test&sesskey=x7Yq-ab',
    ]
    // And every text of up to 8 characters drawn from these, in a fixed pseudo-random order.
    const alphabet = ['a', 'b', '=', '&', '+', '%', '2', '0', 'c']
    let seed = 23
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    for (let i = 0; i < 5000; i++) {
      let text = ''
      for (let length = next() % 9; length > 0; length--) text += alphabet[next() % alphabet.length]
      texts.push(text)
    }
    for (const text of texts) assert.deepEqual(decodeForm(text), viaQs(text), text)
    // Many parts without '=': each is a name with an empty value (one scan of the text).
    const names = Array.from({ length: 20_000 }, (_, i) => `n${i}`)
    const decoded = decodeForm(names.join('&'))
    assert.lengthOf(Object.keys(decoded), 20_000)
    assert.strictEqual(decoded.n19999, '')
  })

  test('a query string read again: the same parameters, in an object of its own', ({ assert }) => {
    const url = '/live/api.php?req=getUserInfo&o_u=ada&sesskey=k-1&note=a+b'
    const first = parseQuery(url)
    first.o_u = 'changed by a caller'
    delete first.note
    const again = parseQuery(url)
    assert.notStrictEqual(again, first)
    assert.deepEqual(again, { req: 'getUserInfo', o_u: 'ada', sesskey: 'k-1', note: 'a b' })
    assert.isFalse(Object.isFrozen(again))
    // Bracket notation makes nested objects: decoded anew each time, never shared.
    const nested = '/live/api.php?req=x&fieldValues[5]=a'
    const one = parseQuery(nested)
    one.fieldValues.five = 'changed'
    assert.deepEqual(parseQuery(nested), { req: 'x', fieldValues: { 5: 'a' } })
    assert.deepEqual(parseQuery('/live/api.php'), {})
    assert.deepEqual(parseQuery(undefined), {})
  })

  test('JSON leaves become strings, as PHP sees them', ({ assert }) => {
    assert.deepEqual(stringifyLeaves({ a: 1, b: true, c: null, d: [1, { e: false }] }), {
      a: '1',
      b: 'true',
      c: '',
      d: ['1', { e: 'false' }],
    })
  })

  test('body overrides query; nested objects merge', ({ assert }) => {
    assert.deepEqual(mergeParams({ a: '1', n: { x: '1', y: '1' } }, { a: '2', n: { y: '2' } }), {
      a: '2',
      n: { x: '1', y: '2' },
    })
  })
})

test.group('session restrictions', () => {
  test('empty means none', ({ assert }) => {
    assert.isFalse(parseRestrictions('').readonly)
    assert.isNull(parseRestrictions(undefined).carnet_code)
  })

  test('JSON, bracket object and flag list agree', ({ assert }) => {
    const fromJson = parseRestrictions('{"readonly":true,"carnet_code":"b","carnet_owner":"o"}')
    const fromObject = parseRestrictions({ readonly: '1', carnet_code: 'b', carnet_owner: 'o' })
    assert.deepEqual(fromJson, fromObject)
    assert.isTrue(parseRestrictions('readonly, hideEvents').hideEvents)
  })

  test('bad input is INVALID_PARAMETER', ({ assert }) => {
    for (const bad of ['{nope', { carnet_owner: 'o' }, ['x']]) {
      assert.throws(() => parseRestrictions(bad))
      try {
        parseRestrictions(bad)
      } catch (error) {
        assert.instanceOf(error, RpcError)
        assert.equal((error as RpcError).code, 'INVALID_PARAMETER')
      }
    }
  })
})
