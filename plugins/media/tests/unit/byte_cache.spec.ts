import { test } from '@japa/runner'
import { ByteCache } from '../../lib/byte_cache.js'

const entry = (size: number) => ({ bytes: Buffer.alloc(size, 1), lastModified: new Date(0) })

test.group('media ByteCache', () => {
  test('keeps files within the budget, the least recently used leaving first', ({ assert }) => {
    const cache = new ByteCache(300, 200)
    cache.set('a', entry(100))
    cache.set('b', entry(100))
    cache.set('c', entry(100))
    assert.equal(cache.size, 300)
    // Reading a makes b the least recently used.
    assert.exists(cache.get('a'))
    cache.set('d', entry(100))
    assert.equal(cache.size, 300)
    assert.isUndefined(cache.get('b'))
    for (const kept of ['a', 'c', 'd']) assert.exists(cache.get(kept))
  })

  test('never holds a file above the largest size, nor anything when turned off', ({ assert }) => {
    const cache = new ByteCache(1000, 200)
    assert.isFalse(cache.accepts(201))
    cache.set('big', entry(201))
    assert.isUndefined(cache.get('big'))
    assert.equal(cache.size, 0)
    const off = new ByteCache(0, 200)
    assert.isFalse(off.accepts(1))
    off.set('a', entry(1))
    assert.isUndefined(off.get('a'))
  })

  test('replacing or deleting a key keeps the count of bytes right', ({ assert }) => {
    const cache = new ByteCache(1000, 500)
    cache.set('a', entry(100))
    cache.set('a', entry(300))
    assert.equal(cache.size, 300)
    cache.delete('a')
    cache.delete('missing')
    assert.equal(cache.size, 0)
  })
})
