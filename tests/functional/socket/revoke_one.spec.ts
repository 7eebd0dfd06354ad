import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { AccessService } from '#core/services/access_service'
import { login, makeUser } from '#tests/helpers/users'
import { attached, ensureSocketEndpoint } from './socket_client.js'

test.group('socket: one sesskey revoked (the console)', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })

  test("closes that session's sockets at once with 4001, and only those", async ({ assert }) => {
    const access = await app.container.make(AccessService)
    const user = await makeUser()
    const revoked = await login(user)
    const kept = await login(user)
    const doomed = await attached(revoked)
    const survivor = await attached(kept)
    const { session } = await access.resolveSession(revoked.sesskey)
    assert.isTrue(await access.revokeSessionOf(user.id, session.id))
    const closed = await doomed.closed
    assert.equal(closed.code, 4001)
    survivor.send({ type: 9 })
    const pong = await survivor.ofType(10)
    assert.equal(pong.status, 'ok')
    await survivor.close()
  })
})
