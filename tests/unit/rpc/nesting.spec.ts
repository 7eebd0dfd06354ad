import { test } from '@japa/runner'
import { MAX_NESTING, acceptNested, parseBoundedJson } from '#core/rpc/nesting'
import { decodeForm } from '#core/rpc/params'

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)

test.group('nesting: client values nest at most MAX_NESTING levels', () => {
  test('acceptNested counts levels without recursion, even 100,000 of them', ({ assert }) => {
    assert.isTrue(acceptNested(JSON.parse(nested(MAX_NESTING))))
    assert.isFalse(acceptNested(JSON.parse(nested(MAX_NESTING + 2))))
    assert.isFalse(acceptNested(JSON.parse(nested(100_000))))
    assert.isTrue(acceptNested('text'))
    assert.isTrue(acceptNested(null))
  })

  test('a value under a dropped key still counts for the depth', ({ assert }) => {
    const deep = `{"a":{"toString":${nested(MAX_NESTING)}}}`
    assert.isFalse(acceptNested(JSON.parse(deep)))
    const shallow = JSON.parse(`{"a":{"toString":[[1]],"b":[{"valueOf":1,"c":2}]}}`)
    assert.isTrue(acceptNested(shallow))
    assert.deepEqual(shallow, { a: { b: [{ c: 2 }] } })
  })

  test('parseBoundedJson refuses deep JSON as malformed JSON is refused', ({ assert }) => {
    assert.throws(() => parseBoundedJson(nested(100_000)), SyntaxError)
    assert.throws(() => parseBoundedJson('{"a":'), SyntaxError)
    assert.deepEqual(parseBoundedJson('{"a":[1,{"b":2}]}'), { a: [1, { b: 2 }] })
  })

  test('keys named like Object.prototype members are dropped by every decoder', ({ assert }) => {
    const parsed = parseBoundedJson(
      '{"toString":"x","a":{"valueOf":1,"__proto__":{"p":1},"constructor":2,"ok":3}}'
    ) as Record<string, any>
    assert.deepEqual(Object.keys(parsed), ['a'])
    assert.deepEqual(Object.keys(parsed.a), ['ok'])
    assert.equal(String(parsed), '[object Object]')
    const form = decodeForm('a[toString]=x&a[b]=1&toString=y&c[]=1')
    assert.equal(String(form.a), '[object Object]')
    assert.isFalse(Object.hasOwn(form, 'toString'))
    assert.isFalse(Object.hasOwn(form.a, 'toString'))
    assert.equal(form.a.b, '1')
  })
})
