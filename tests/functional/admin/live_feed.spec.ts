import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { Transmit } from '@adonisjs/transmit-client'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, login } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'
import { DASHBOARD_CHANNEL, DashboardFeed } from '#admin/live_feed'
import { NodeEventSource } from '../socket/event_source.js'

async function subscribe(token?: string) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (token !== undefined) headers['X-Console-Token'] = token
  const response = await fetch(`${serverUrl()}/__transmit/subscribe`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ uid: randomUUID(), channel: DASHBOARD_CHANNEL }),
  })
  await response.text()
  return response.status
}

test.group('admin console: the dashboard is told through Transmit when figures change', () => {
  test('only an administrator token may subscribe to admin/dashboard', async ({ assert }) => {
    const admin = await makeUser({ isAdmin: true })
    const member = await makeUser()
    assert.equal(await subscribe(), 400)
    assert.equal(await subscribe('forged'), 400)
    assert.equal(await subscribe(DashboardFeed.tokenFor(member.id)), 400)
    assert.equal(await subscribe(DashboardFeed.tokenFor(admin.id)), 204)
    assert.equal(await subscribe(`${DashboardFeed.tokenFor(admin.id)}x`), 400)
  })

  test('a message sent through api.php reaches the subscribed dashboard', async ({ assert }) => {
    const admin = await makeUser({ isAdmin: true })
    const transmit = new Transmit({
      baseUrl: serverUrl(),
      maxReconnectAttempts: 1,
      eventSourceFactory: (url) => new NodeEventSource(url) as unknown as EventSource,
      beforeSubscribe: (request) =>
        request.headers.set('X-Console-Token', DashboardFeed.tokenFor(admin.id)),
    })
    const notices: Record<string, any>[] = []
    const subscription = transmit.subscription(DASHBOARD_CHANNEL)
    subscription.onMessage((payload: Record<string, any>) => notices.push(payload))
    await subscription.create()
    try {
      const session = await login(admin)
      const keys = { o_u: admin.code, u_c: admin.code, sesskey: session.sesskey }
      await rpc({ req: 'createBook', ...keys, b_c: 'live' })
      const sent = await rpc({ req: 'sendMsg', ...keys, b_o: admin.code, b_c: 'live', msg: 'hi' })
      assert.equal(sent.body.status, 'ok')
      const deadline = Date.now() + 10_000
      while (notices.length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50))
      assert.isAbove(notices.length, 0, 'no notice on admin/dashboard')
      assert.isNumber(notices[0].changed)
    } finally {
      transmit.close()
    }
  })
})
