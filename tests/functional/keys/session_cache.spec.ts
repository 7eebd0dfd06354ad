import application from '@adonisjs/core/services/app'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { AccessService, writesSessionTables } from '#core/services/access_service'
import { UserService } from '#core/services/user_service'
import { writeQuery } from '#core/native_sql'
import { UserKeyedCache } from '#core/invalidation/user_keyed_cache'
import { hasRedis, onMysql } from '#tests/helpers/database'
import { rpc } from '#tests/helpers/rpc'
import { login, makeUser, type Session } from '#tests/helpers/users'
import { startInstance, type Instance } from '../socket/instances.js'

/**
 * The session cache of MariaDB + Redis (AccessService's, app/core/invalidation/): a revoked
 * sesskey is refused at once, by the instance that revoked it and by every other one. On
 * SQLite the same specs hold through readCached (no process cache there), so they run on both.
 */

const access = await application.container.make(AccessService)
const users = await application.container.make(UserService)

const cached = () => onMysql() && hasRedis()
const needsCache = () =>
  cached() ? null : 'needs DB_CONNECTION=mysql and REDIS_HOST: the cache is off otherwise (skipped)'

async function userInfo(session: Session, url?: string) {
  const params = {
    req: 'getUserInfo',
    o_u: session.o_u,
    u_c: session.o_u,
    sesskey: session.sesskey,
  }
  if (!url) {
    const answer = await rpc(params)
    return answer.body
  }
  const response = await fetch(`${url}/live/api.php`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  })
  return (await response.json()) as Record<string, any>
}

async function sessionIdOf(sesskey: string) {
  const { session } = await access.resolveSession(sesskey)
  return session.id
}

/** getUserInfo's status with this session ('ok', or the errorCode of a nok). */
async function statusOf(session: Session, url?: string): Promise<string> {
  const answer = await userInfo(session, url)
  return answer.status === 'ok' ? 'ok' : String(answer.errorCode)
}

async function fnameOf(session: Session, url?: string): Promise<string> {
  const answer = await userInfo(session, url)
  return answer.userInfo?.userPrefs?.fname
}

test.group('session cache: revocations are refused at once (this instance)', () => {
  test('the cache answers a live session without reading it again', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    assert.equal(await statusOf(session), 'ok')
    // A write that bypasses every invalidation (a driver-level statement, no bus message) is
    // not seen while the entry lives: the session is answered from the cache. This is what the
    // other specs' refusals prove wrong for every real revocation path.
    await writeQuery(
      db.connection(),
      'UPDATE api_sessions SET revoked_at = CURRENT_TIMESTAMP WHERE id = ?',
      [await sessionIdOf(session.sesskey)]
    )
    assert.equal(await statusOf(session), 'ok')
    // Any knex write to api_sessions empties the cache (the safety net under the explicit
    // invalidations): the revoked row is read, and refused.
    await db.from('api_sessions').where('id', -1).update({ revoked_reason: 'nothing' })
    assert.equal(await statusOf(session), 'INVALID_SESSKEY')
  }).skip(Boolean(needsCache()), needsCache() ?? undefined)

  test('dropAllSessions: the other sessions are refused by the next request', async ({
    assert,
  }) => {
    const user = await makeUser()
    const keep = await login(user)
    const other = await login(user)
    assert.equal(await statusOf(other), 'ok')
    assert.equal(await statusOf(other), 'ok')
    const answer = await rpc({ req: 'dropAllSessions', o_u: keep.o_u, sesskey: keep.sesskey })
    assert.equal(answer.body.status, 'ok', answer.text)
    assert.equal(await statusOf(other), 'INVALID_SESSKEY')
    assert.equal(await statusOf(keep), 'ok')
  })

  test('revokeSessionOf (the console drops one sesskey)', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    const sibling = await login(user)
    assert.equal(await statusOf(session), 'ok')
    assert.equal(await statusOf(sibling), 'ok')
    assert.isTrue(await access.revokeSessionOf(user.id, await sessionIdOf(session.sesskey)))
    assert.equal(await statusOf(session), 'INVALID_SESSKEY')
    assert.equal(await statusOf(sibling), 'ok')
  })

  test('revokeAllSessionsOf (revoke-others of the auth service, a disabled account)', async ({
    assert,
  }) => {
    const user = await makeUser()
    const sessions = [await login(user), await login(user)]
    for (const session of sessions) assert.equal(await statusOf(session), 'ok')
    await users.setDisabled(user, true)
    await access.revokeAllSessionsOf(user.id, 'disabled')
    for (const session of sessions) assert.equal(await statusOf(session), 'INVALID_SESSKEY')
  })

  test('revokeOauthkeyOf: the sesskeys made from that oauthkey', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    assert.equal(await statusOf(session), 'ok')
    const [key] = await db
      .from('oauth_keys')
      .where('user_id', user.id)
      .whereNull('revoked_at')
      .select('id')
    assert.isTrue(await access.revokeOauthkeyOf(user.id, Number(key.id)))
    assert.equal(await statusOf(session), 'INVALID_SESSKEY')
  })

  test("a change of the user's row is answered at once", async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    assert.equal(await fnameOf(session), 'Test')
    await users.update(user, { firstName: 'Renamed' })
    assert.equal(await fnameOf(session), 'Renamed')
  })
})

test.group('session cache: several instances (MariaDB + Redis)', (group) => {
  const instances: Instance[] = []
  const PORT = Number(process.env.SESSION_CACHE_TEST_PORT ?? 39660)

  group.setup(async () => {
    if (!cached()) return
    instances.push(...(await Promise.all([startInstance(PORT), startInstance(PORT + 1)])))
  })
  group.teardown(async () => {
    await Promise.all(instances.map((instance) => instance.stop()))
  })

  /** Every instance (and this process) has the session in its cache. */
  async function warm(session: Session) {
    for (const instance of instances) {
      for (let index = 0; index < 3; index++)
        assert((await statusOf(session, instance.url)) === 'ok')
    }
    assert((await statusOf(session)) === 'ok')
  }
  const assert = (ok: boolean) => {
    if (!ok) throw new Error('a warming request failed')
  }

  test('dropAllSessions on one instance: refused at once on the other', async ({ assert: a }) => {
    const [first, second] = instances
    const user = await makeUser()
    const keep = await login(user)
    const other = await login(user)
    await warm(other)
    const response = await fetch(`${first.url}/live/api.php`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ req: 'dropAllSessions', o_u: keep.o_u, sesskey: keep.sesskey }),
    })
    const answer = (await response.json()) as Record<string, unknown>
    a.equal(answer.status, 'ok')
    a.equal(await statusOf(other, second.url), 'INVALID_SESSKEY')
    a.equal(await statusOf(other, first.url), 'INVALID_SESSKEY')
    a.equal(await statusOf(keep, second.url), 'ok')
  }).skip(Boolean(needsCache()), needsCache() ?? undefined)

  test('revocations made in a third process: refused at once by both instances', async ({
    assert: a,
  }) => {
    const [first, second] = instances
    const user = await makeUser()
    const one = await login(user)
    const two = await login(user)
    const three = await login(user)
    for (const session of [one, two, three]) await warm(session)

    await access.revokeSessionOf(user.id, await sessionIdOf(one.sesskey))
    a.equal(await statusOf(one, first.url), 'INVALID_SESSKEY')
    a.equal(await statusOf(one, second.url), 'INVALID_SESSKEY')
    a.equal(await statusOf(two, second.url), 'ok')

    const [key] = await db
      .from('api_sessions')
      .where('id', await sessionIdOf(two.sesskey))
      .select('oauth_key_id')
    await access.revokeOauthkeyOf(user.id, Number(key.oauth_key_id))
    a.equal(await statusOf(two, second.url), 'INVALID_SESSKEY')
    a.equal(await statusOf(two, first.url), 'INVALID_SESSKEY')

    await access.revokeAllSessionsOf(user.id, 'disabled')
    a.equal(await statusOf(three, first.url), 'INVALID_SESSKEY')
    a.equal(await statusOf(three, second.url), 'INVALID_SESSKEY')
  }).skip(Boolean(needsCache()), needsCache() ?? undefined)

  test("a change of a user's row made elsewhere reaches the instances' caches", async ({
    assert: a,
  }) => {
    const [first, second] = instances
    const user = await makeUser()
    const session = await login(user)
    await warm(session)
    // No explicit invalidation here: the knex write's own (watchWrites), unawaited. Without
    // it the instances would answer the old name for the cache's 5 s.
    await users.update(user, { firstName: 'Elsewhere' })
    const deadline = Date.now() + 1000
    let names: string[] = []
    do {
      names = [await fnameOf(session, first.url), await fnameOf(session, second.url)]
    } while (names.some((name) => name !== 'Elsewhere') && Date.now() < deadline)
    a.deepEqual(names, ['Elsewhere', 'Elsewhere'])
  }).skip(Boolean(needsCache()), needsCache() ?? undefined)
})

test.group('session cache: units', () => {
  test('writes that touch cached tables are recognised; inserts and other tables are not', ({
    assert,
  }) => {
    for (const sql of [
      'update `users` set `first_name` = ? where `id` = ?',
      'UPDATE api_sessions SET revoked_at = ? WHERE id = ?',
      'delete from `users` where `id` = ?',
      'delete from `api_sessions` where `user_id` = ?',
      'insert into `users` (`id`, `code`) values (?, ?) on duplicate key update `code` = values(`code`)',
      'replace into `users` (`id`) values (?)',
    ])
      assert.isTrue(writesSessionTables(sql), sql)
    for (const sql of [
      'insert into `api_sessions` (`user_id`) values (?)',
      'select * from `users` where `id` = ?',
      'update `auth_users` set `x` = ?',
      'update `users_meta` set `x` = ?',
      'delete from `book_users` where `id` = ?',
      'update `oauth_keys` set `revoked_at` = ?',
    ])
      assert.isFalse(writesSessionTables(sql), sql)
  })

  test('a read begun before an invalidation does not refill the cache', ({ assert }) => {
    const cache = new UserKeyedCache({ ttlMs: 60_000, maxEntries: 50_000 })
    const before = cache.mark()
    cache.invalidateUser(7)
    cache.set('digest', { id: 1 }, 7, before)
    assert.isUndefined(cache.get('digest'))
    const again = cache.mark()
    cache.set('digest', { id: 1 }, 7, again)
    assert.deepEqual(cache.get('digest'), { id: 1 })
    const stale = cache.mark()
    cache.clear()
    cache.set('other', { id: 2 }, 8, stale)
    assert.isUndefined(cache.get('other'))
  })

  test('entries expire after the TTL', ({ assert }) => {
    const cache = new UserKeyedCache({ ttlMs: 1000, maxEntries: 50_000 })
    cache.set('digest', { id: 1 }, 7, cache.mark(), 0)
    assert.deepEqual(cache.get('digest', 999), { id: 1 })
    assert.isUndefined(cache.get('digest', 1001))
  })
})
