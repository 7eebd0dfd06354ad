import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { Clock } from '#plugins/auth_service/services/clock'
import { UserKeyedCache } from '#core/invalidation/user_keyed_cache'
import { TokenService } from '#plugins/auth_service/services/token_service'
import { SecretBox } from '#plugins/auth_service/services/secrets'
import { RedisInvalidationBus } from '#core/invalidation/invalidation_bus'
import type { SessionState } from '#plugins/auth_service/services/session_service'
import { effectiveTotpPolicy } from '#plugins/auth_service/services/auth_user_service'
import { parseJwtKeys } from '#plugins/auth_service/config'
import { hasRedis } from '#tests/helpers/database'

const key = (text: string) => new TextEncoder().encode(text.padEnd(32, '.'))
const claims = {
  sub: '00000000-0000-4000-8000-000000000000',
  sid: 'session-1',
  uid: 7,
  u_c: 'alice',
}

test.group('auth_service: session-state cache', () => {
  test('a fill that started before an invalidation of its user is dropped', ({ assert }) => {
    const cache = new UserKeyedCache<SessionState>({ ttlMs: 60_000, maxEntries: 200_000 })
    const mark = cache.mark()
    cache.invalidateUser(7)
    cache.set('s1', { userId: 7, active: true }, 7, mark, 0)
    assert.isUndefined(cache.get('s1', 0))
    cache.set('s1', { userId: 7, active: true }, 7, cache.mark(), 0)
    assert.isTrue(cache.get('s1', 0)?.active)
  })

  test('invalidating a user drops all its sessions and only its own', ({ assert }) => {
    const cache = new UserKeyedCache<SessionState>({ ttlMs: 60_000, maxEntries: 200_000 })
    cache.set('a1', { userId: 1, active: true }, 1, cache.mark(), 0)
    cache.set('a2', { userId: 1, active: true }, 1, cache.mark(), 0)
    cache.set('b1', { userId: 2, active: true }, 2, cache.mark(), 0)
    cache.invalidateUser(1)
    assert.isUndefined(cache.get('a1', 0))
    assert.isUndefined(cache.get('a2', 0))
    assert.isTrue(cache.get('b1', 0)?.active)
  })

  test('entries expire after the ttl; clear() also rejects fills begun before it', ({ assert }) => {
    const cache = new UserKeyedCache<SessionState>({ ttlMs: 1000, maxEntries: 200_000 })
    cache.set('a', { userId: 1, active: true }, 1, cache.mark(), 0)
    assert.isUndefined(cache.get('a', 1001))
    const mark = cache.mark()
    cache.clear()
    cache.set('a', { userId: 1, active: true }, 1, mark, 0)
    assert.equal(cache.size, 0)
  })
})

test.group('auth_service: JWT keys', () => {
  test('rotation: the first key signs, older keys still verify, removed keys do not', async ({
    assert,
  }) => {
    const clock = new Clock()
    const before = await new TokenService(
      [{ kid: 'k1', secret: key('one') }],
      'Quire',
      900,
      clock
    ).init()
    const rotated = await new TokenService(
      [
        { kid: 'k2', secret: key('two') },
        { kid: 'k1', secret: key('one') },
      ],
      'Quire',
      900,
      clock
    ).init()
    const retired = await new TokenService(
      [{ kid: 'k2', secret: key('two') }],
      'Quire',
      900,
      clock
    ).init()

    const old = await before.sign(claims).then((reply) => reply.jwt)
    const fresh = await rotated.sign(claims).then((reply) => reply.jwt)
    const oldClaims = await rotated.verify(old)
    const freshClaims = await rotated.verify(fresh)
    assert.equal(oldClaims?.kid, 'k1')
    assert.equal(freshClaims?.kid, 'k2')
    assert.isNull(await retired.verify(old))
    assert.isNull(await before.verify(fresh))
  })

  test('the clock decides expiry', async ({ assert }) => {
    const clock = new Clock()
    const tokens = await new TokenService(
      [{ kid: 'k', secret: key('k') }],
      'Quire',
      60,
      clock
    ).init()
    const { jwt } = await tokens.sign(claims)
    clock.advance(59_000)
    assert.isNotNull(await tokens.verify(jwt))
    clock.advance(2_000)
    assert.isNull(await tokens.verify(jwt))
  })

  test('AUTH_JWT_KEYS parsing', ({ assert }) => {
    const keys = parseJwtKeys(
      'new:0123456789abcdef0123456789abcdef, old:fedcba9876543210fedcba9876543210'
    )
    assert.deepEqual(
      keys.map((entry) => entry.kid),
      ['new', 'old']
    )
    assert.throws(() => parseJwtKeys('nocolon'))
    assert.throws(() => parseJwtKeys('k:short'))
    assert.equal(parseJwtKeys(undefined)[0].kid, 'app-1')
  })
})

test.group('auth_service: secrets and policy', () => {
  test('sealed secrets open with the key and fail when tampered with', ({ assert }) => {
    const box = new SecretBox(Buffer.alloc(32, 7))
    const sealed = box.seal('JBSWY3DPEHPK3PXP')
    assert.notInclude(sealed, 'JBSWY3DPEHPK3PXP')
    assert.equal(box.open(sealed), 'JBSWY3DPEHPK3PXP')
    const parts = sealed.split('.')
    parts[3] = Buffer.from('tampered').toString('base64url')
    assert.throws(() => box.open(parts.join('.')))
    assert.throws(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed))
  })

  test('a per-user TOTP policy overrides the global one', ({ assert }) => {
    assert.equal(effectiveTotpPolicy(null, 'optional'), 'optional')
    assert.equal(effectiveTotpPolicy(null, 'required'), 'required')
    assert.equal(effectiveTotpPolicy('required', 'optional'), 'required')
    assert.equal(effectiveTotpPolicy('optional', 'required'), 'optional')
  })
})

test.group('auth_service: revocation bus over Redis', () => {
  test('invalidateUser resolves only after every subscribed instance dropped the user', async ({
    assert,
  }) => {
    const manager = await app.container.make('redis')
    const redis = manager.connection('main')
    const logger = await app.container.make('logger')
    const prefix = `${process.env.REDIS_PREFIX ?? 'quire:'}unit-${Date.now()}:`
    const caches = [
      new UserKeyedCache<SessionState>({ ttlMs: 60_000, maxEntries: 200_000 }),
      new UserKeyedCache<SessionState>({ ttlMs: 60_000, maxEntries: 200_000 }),
      new UserKeyedCache<SessionState>({ ttlMs: 60_000, maxEntries: 200_000 }),
    ]
    const buses = caches.map(
      (cache) => new RedisInvalidationBus(redis, cache, logger, `${prefix}auth-sessions`)
    )
    for (const bus of buses) await bus.start()
    try {
      for (const cache of caches) cache.set('s', { userId: 42, active: true }, 42, cache.mark(), 0)
      assert.isTrue(buses.every((bus) => bus.healthy))
      await buses[0].invalidateUser(42)
      for (const cache of caches) assert.isUndefined(cache.get('s', 0))
    } finally {
      for (const bus of buses) await bus.stop()
    }
  }).skip(!hasRedis(), 'needs Redis: set REDIS_HOST')
})

test.group('auth_service: error catalogue', () => {
  test('README lists every error with its HTTP status', async ({ assert }) => {
    const { readFile } = await import('node:fs/promises')
    const { AUTH_ERRORS } = await import('#plugins/auth_service/errors')
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    // A table row, whatever padding the formatter gives its cells.
    for (const [code, { status }] of Object.entries(AUTH_ERRORS)) {
      assert.match(readme, new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`), code)
    }
  })
})
