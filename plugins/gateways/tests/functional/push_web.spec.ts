import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { serverUrl } from '#tests/helpers/server'
import { client, expectNok, send } from '#plugins/books/tests/helpers/books'
import gatewaysConfig from '#plugins/gateways/config'
import {
  deliveriesOf,
  register,
  settled,
  sharedWith,
  usePushFakes,
} from '#plugins/gateways/tests/helpers/push'

const deviceRow = (id: number) => db.from('gateways_push_devices').where('id', id).first()
const isActive = async (id: number) => {
  const row = await deviceRow(id)
  return Boolean(row.active)
}

test.group('gateways: Web Push for browsers', (group) => {
  const fakes = usePushFakes(group)

  test('a browser subscription gets a new message, VAPID-signed and aes128gcm-encrypted; the sender’s does not', async ({
    assert,
  }) => {
    const { owner, target, members } = await sharedWith(1, { title: 'Groceries' })
    const [bob] = members
    const bobBrowser = fakes.web.subscribe()
    const ownerBrowser = fakes.web.subscribe()
    const bobDevice = await register(bob, 'web_push', bobBrowser.json)
    const ownerDevice = await register(owner, 'web_push', ownerBrowser.json)
    // Stored without expirationTime; the same subscription again is the same device.
    const row = await deviceRow(bobDevice)
    assert.deepEqual(JSON.parse(row.registration_id), {
      endpoint: bobBrowser.endpoint,
      keys: JSON.parse(bobBrowser.json).keys,
    })
    assert.equal(await register(bob, 'web_push', bobBrowser.json), bobDevice)

    const sent = await send(owner, target, 'buy milk')
    const [delivery] = await settled(bobDevice, 1)
    assert.equal(delivery.state, 'delivered')
    assert.equal(delivery.channel, 'push_web')
    const received = fakes.web.received.filter((r) => r.subscriptionId === bobBrowser.id)
    assert.lengthOf(received, 1)
    const [{ payload, headers }] = received
    // What the fake decrypted with the browser's private key.
    assert.deepEqual(payload, {
      title: 'Groceries',
      body: 'buy milk',
      tag: headers.topic,
      data: {
        type: 'message',
        b_o: target.b_o,
        b_c: target.b_c,
        smid: String(sent.createMessageId),
        uuid: sent.uuid,
        u_c: owner.code,
      },
    })
    assert.match(String(headers.topic), /^book-\d+$/)
    assert.equal(headers.urgency, 'high')
    assert.equal(headers.ttl, String(gatewaysConfig.webPush.ttlSeconds))
    assert.lengthOf(await deliveriesOf(ownerDevice), 0)
    assert.isEmpty(fakes.web.received.filter((r) => r.subscriptionId === ownerBrowser.id))
  })

  test('a confidential book’s notification carries no text nor sender', async ({ assert }) => {
    const { target, members } = await sharedWith(2, {
      ownerPrefs: JSON.stringify({ notifyMobileConfidential: true }),
    })
    const browser = fakes.web.subscribe()
    const device = await register(members[0], 'web_push', browser.json)
    // A member sends (the owner's code is the book's b_o).
    await send(members[1], target, 'the secret code is 4321')
    await settled(device, 1)
    const [{ payload }] = fakes.web.received.filter((r) => r.subscriptionId === browser.id)
    assert.equal(payload.body, 'New message')
    assert.notInclude(JSON.stringify(payload), '4321')
    assert.notInclude(JSON.stringify(payload), members[1].code)
  })

  test('410 Gone and 404 Not Found from the push service deactivate the device', async ({
    assert,
  }) => {
    const { owner, target, members } = await sharedWith(2)
    const gone = fakes.web.subscribe()
    const missing = fakes.web.subscribe()
    fakes.web.gone.add(gone.id)
    fakes.web.missing.add(missing.id)
    const goneDevice = await register(members[0], 'web_push', gone.json)
    const missingDevice = await register(members[1], 'web_push', missing.json)
    await send(owner, target, 'hello')
    for (const [device, status] of [
      [goneDevice, 410],
      [missingDevice, 404],
    ]) {
      const [delivery] = await settled(device, 1)
      assert.equal(delivery.state, 'failed')
      assert.equal(Number(delivery.attempts), 1)
      assert.equal(Number(delivery.last_status), status)
      assert.isFalse(await isActive(device))
    }
    // Deactivated: the next message writes no delivery for them.
    await send(owner, target, 'again')
    assert.lengthOf(await deliveriesOf(goneDevice), 1)
    assert.lengthOf(await deliveriesOf(missingDevice), 1)
  })

  test('the push service refuses a request signed with another VAPID key; nothing is deactivated', async ({
    assert,
  }) => {
    const { owner, target, members } = await sharedWith(1)
    const browser = fakes.web.subscribe()
    const device = await register(members[0], 'web_push', browser.json)
    const saved = { ...gatewaysConfig.webPush }
    // Another valid key pair: the fake checks k and the JWT's signature against the subscription's.
    const { default: webpush } = await import('web-push')
    Object.assign(gatewaysConfig.webPush, webpush.generateVAPIDKeys())
    try {
      await send(owner, target, 'hello')
      const [delivery] = await settled(device, 1)
      assert.equal(delivery.state, 'failed')
      assert.equal(Number(delivery.last_status), 403)
    } finally {
      Object.assign(gatewaysConfig.webPush, saved)
    }
    assert.deepEqual(fakes.web.rejected, ['k is not the key the subscription has'])
    fakes.web.rejected.length = 0
    assert.isTrue(await isActive(device))
  })

  test('updatePushId refuses a subscription that is not one, or names another host or plain http', async ({
    assert,
  }) => {
    const alice = await client()
    const browser = fakes.web.subscribe()
    const good = JSON.parse(browser.json)
    const curve = Buffer.from(good.keys.p256dh, 'base64url')
    curve[64] ^= 1 // no longer a point of P-256
    const cases: Record<string, unknown>[] = [
      { endpoint: browser.endpoint }, // no keys
      { ...good, endpoint: 'https://push.example.net/send/1' }, // not a push service host
      { ...good, endpoint: 'ftp://127.0.0.1/push/1' },
      { ...good, keys: { ...good.keys, auth: 'c2hvcnQ' } },
      { ...good, keys: { ...good.keys, p256dh: curve.toString('base64url') } },
    ]
    const registrations = [...cases.map((value) => JSON.stringify(value)), 'not json', '[]']
    for (const registrationID of registrations) {
      const answer = await alice.call({
        req: 'updatePushId',
        deviceType: 'web_push',
        registrationID,
      })
      expectNok(assert, answer, 'INVALID_PARAMETER')
      assert.equal(answer.field, 'registrationID', registrationID)
    }
    // Plain http only while GATEWAYS_WEBPUSH_ALLOW_HTTP says so (tests).
    gatewaysConfig.webPush.allowHttp = false
    try {
      const answer = await alice.call({
        req: 'updatePushId',
        deviceType: 'web_push',
        registrationID: browser.json,
      })
      expectNok(assert, answer, 'INVALID_PARAMETER')
      assert.include(answer.errorMsg, 'https')
    } finally {
      gatewaysConfig.webPush.allowHttp = true
    }
    const rows = await db.from('gateways_push_devices').where('user_id', alice.user.id)
    assert.lengthOf(rows, 0)
  })

  test('a browser unsubscribing deactivates its device, even after its push host left the list', async ({
    assert,
  }) => {
    const alice = await client()
    const browser = fakes.web.subscribe()
    const device = await register(alice, 'web_push', browser.json)
    const hosts = gatewaysConfig.webPush.endpointHosts
    gatewaysConfig.webPush.endpointHosts = ['push.example.org']
    try {
      const off = await alice.call({ req: 'updatePushId', deviceID: device, active: 'FALSE' })
      assert.equal(off.status, 'ok', JSON.stringify(off))
      assert.isFalse(await isActive(device))
      // A new registration is checked against the list as it is now.
      const again = await alice.call({
        req: 'updatePushId',
        deviceID: device,
        registrationID: browser.json,
      })
      expectNok(assert, again, 'INVALID_PARAMETER')
    } finally {
      gatewaysConfig.webPush.endpointHosts = hosts
    }
  })

  test('the VAPID public key is served to browsers; 404 while Web Push is off', async ({
    assert,
  }) => {
    const url = `${serverUrl()}/gateways/push/vapid-public-key`
    const response = await fetch(url)
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { publicKey: fakes.web.vapid.publicKey })
    const saved = gatewaysConfig.webPush.privateKey
    gatewaysConfig.webPush.privateKey = undefined
    try {
      const off = await fetch(url)
      assert.equal(off.status, 404)
      assert.notInclude(await off.text(), fakes.web.vapid.publicKey)
    } finally {
      gatewaysConfig.webPush.privateKey = saved
    }
  })
})
