import { randomBytes } from 'node:crypto'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { waitFor } from '#tests/helpers/queue'
import { send } from '#plugins/books/tests/helpers/books'
import { PushDeliveryService } from '#plugins/gateways/services/push/push_delivery_service'
import type { FakeApns, FakeFcm } from '#plugins/gateways/tests/helpers/push_fakes'
import {
  apnsToken,
  deliveriesOf,
  fcmToken,
  register,
  settled,
  sharedWith,
  usePushFakes,
} from '#plugins/gateways/tests/helpers/push'

const fcmFor = (fcm: FakeFcm, token: string) =>
  fcm.received.filter((message) => message.token === token)
const apnsFor = (apns: FakeApns, token: string) =>
  apns.received.filter((request) => request.token === token)

test.group('gateways: push deliveries of new messages', (group) => {
  const fakes = usePushFakes(group)
  let fcm: FakeFcm
  let apns: FakeApns
  group.setup(() => {
    fcm = fakes.fcm
    apns = fakes.apns
  })

  test("a new message reaches the members' FCM and APNs devices, not the sender's", async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2, { title: 'Groceries' })
    const [ownerToken, bobToken, carolToken] = [fcmToken(), fcmToken(), apnsToken()]
    const ownerDevice = await register(owner, 'gcm_rid', ownerToken)
    const bobDevice = await register(bob, 'gcm_rid', bobToken)
    const carolDevice = await register(carol, 'ios_dt_v2', carolToken)

    const sent = await send(owner, target, 'buy milk')
    await settled(bobDevice, 1)
    await settled(carolDevice, 1)

    const [toBob] = fcmFor(fcm, bobToken)
    assert.deepEqual(toBob.notification, { title: 'Groceries', body: 'buy milk' })
    assert.deepEqual(toBob.data, {
      type: 'message',
      b_o: target.b_o,
      b_c: target.b_c,
      smid: String(sent.createMessageId),
      uuid: sent.uuid,
      u_c: owner.code,
    })
    assert.match(toBob.android.collapse_key, /^book-\d+$/)
    const [toCarol] = apnsFor(apns, carolToken)
    assert.equal(toCarol.headers['apns-topic'], apns.topic)
    assert.equal(toCarol.headers['apns-collapse-id'], toBob.android.collapse_key)
    assert.deepEqual(toCarol.payload.aps.alert, { title: 'Groceries', body: 'buy milk' })
    assert.equal(toCarol.payload.aps['thread-id'], toBob.android.collapse_key)
    assert.equal(toCarol.payload.smid, sent.createMessageId)
    // The sender's own device: no delivery was even written.
    assert.lengthOf(await deliveriesOf(ownerDevice), 0)
    assert.lengthOf(fcmFor(fcm, ownerToken), 0)
    // One OAuth token serves every send.
    assert.equal(fcm.tokensIssued, 1)

    // Bob answers: the owner's device gets it, Bob's does not.
    await send(bob, target, 'done')
    await settled(ownerDevice, 1)
    assert.equal(fcmFor(fcm, ownerToken)[0].notification.body, 'done')
    assert.lengthOf(fcmFor(fcm, bobToken), 1)
  })

  test('sends of two members committed together: each message is written for the other one only', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    const ownerDevice = await register(owner, 'gcm_rid', fcmToken())
    const bobDevice = await register(bob, 'gcm_rid', fcmToken())
    // Sends arriving while a batch commits go together in the next one (one stamp, one
    // transaction), where the book's devices are read once: each message leaves its own sender out.
    let together = false
    const sent: { smid: number; from: 'owner' | 'bob' }[] = []
    for (let round = 0; round < 10 && !together; round++) {
      const answers = await Promise.all(
        (['owner', 'bob', 'owner', 'bob'] as const).map(async (from) => ({
          from,
          answer: await send(from === 'owner' ? owner : bob, target, `${from} ${round}`),
        }))
      )
      const stamps = new Map<number, Set<string>>()
      for (const { from, answer } of answers) {
        sent.push({ smid: Number(answer.createMessageId), from })
        const [row] = await db.from('book_messages').where('smid', answer.createMessageId)
        const senders = stamps.get(Number(row.cstamp)) ?? new Set<string>()
        stamps.set(Number(row.cstamp), senders.add(from))
      }
      together = [...stamps.values()].some((senders) => senders.size === 2)
    }
    assert.isTrue(together, 'a send of each member was committed in one batch')
    const smidsOf = async (device: number) => {
      const rows = await deliveriesOf(device)
      return rows.map((row) => Number(JSON.parse(row.payload).data.smid)).sort()
    }
    const of = (from: string) =>
      sent
        .filter((entry) => entry.from === from)
        .map((entry) => entry.smid)
        .sort()
    assert.deepEqual(await smidsOf(ownerDevice), of('bob'))
    assert.deepEqual(await smidsOf(bobDevice), of('owner'))
  })

  test('notifyMobile off: nothing for that member; inactive devices get nothing', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2)
    const bobDevice = await register(bob, 'gcm_rid', fcmToken())
    const carolToken = fcmToken()
    const carolDevice = await register(carol, 'gcm_rid', carolToken)
    const carolOld = await register(carol, 'gcm_rid', fcmToken())
    const off = await carol.call({ req: 'updatePushId', deviceID: carolOld, active: 'FALSE' })
    assert.equal(off.status, 'ok')
    const prefs = await bob.call({ req: 'updateBookUserPrefs', ...target, notifyMobile: 'false' })
    assert.equal(prefs.status, 'ok', JSON.stringify(prefs))

    await send(owner, target, 'hello')
    // Deliveries are written with the message: Bob's and the inactive device's are absent.
    assert.lengthOf(await deliveriesOf(bobDevice), 0)
    assert.lengthOf(await deliveriesOf(carolOld), 0)
    await settled(carolDevice, 1)
    assert.lengthOf(fcmFor(fcm, carolToken), 1)
  })

  test('notifyMobileConfidential: the payload carries no text and no sender', async ({
    assert,
  }) => {
    const {
      target,
      members: [bob, carol],
    } = await sharedWith(2, { ownerPrefs: JSON.stringify({ notifyMobileConfidential: true }) })
    const [fcmTok, apnsTok] = [fcmToken(), apnsToken()]
    const fcmDevice = await register(bob, 'gcm_rid', fcmTok)
    const apnsDevice = await register(bob, 'ios_dt', apnsTok)
    await send(carol, target, 'the secret code is 4321')
    await settled(fcmDevice, 1)
    await settled(apnsDevice, 1)
    const [message] = fcmFor(fcm, fcmTok)
    const [request] = apnsFor(apns, apnsTok)
    for (const seen of [JSON.stringify(message), JSON.stringify(request.payload)]) {
      assert.notInclude(seen, '4321')
      assert.notInclude(seen, carol.code)
    }
    assert.equal(message.notification.body, 'New message')
    assert.equal(request.payload.aps.alert.body, 'New message')
    // Nor is the text stored in the outbox row.
    const [row] = await deliveriesOf(fcmDevice)
    assert.notInclude(row.payload, '4321')
  })

  test('FCM UNREGISTERED and APNs 410 deactivate the device', async ({ assert }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    const [fcmTok, apnsTok] = [fcmToken(), apnsToken()]
    const fcmDevice = await register(bob, 'gcm_rid', fcmTok)
    const apnsDevice = await register(bob, 'ios_dt', apnsTok)
    fcm.unregistered.add(fcmTok)
    apns.unregistered.add(apnsTok)
    await send(owner, target, 'anyone there?')
    const [fcmRow] = await settled(fcmDevice, 1)
    const [apnsRow] = await settled(apnsDevice, 1)
    assert.equal(fcmRow.state, 'failed')
    assert.equal(Number(fcmRow.attempts), 1)
    assert.equal(Number(fcmRow.last_status), 404)
    assert.equal(apnsRow.state, 'failed')
    assert.equal(Number(apnsRow.last_status), 410)
    const devices = await db.from('gateways_push_devices').whereIn('id', [fcmDevice, apnsDevice])
    assert.isTrue(devices.every((device) => !Number(device.active)))
    // The next message writes no delivery for them.
    await send(owner, target, 'still nobody')
    assert.lengthOf(await deliveriesOf(fcmDevice), 1)
    assert.lengthOf(await deliveriesOf(apnsDevice), 1)
  })

  test('a revoked FCM access token or an expired APNs provider token is renewed and the send retried', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    const [fcmTok, apnsTok] = [fcmToken(), apnsToken()]
    const fcmDevice = await register(bob, 'gcm_rid', fcmTok)
    const apnsDevice = await register(bob, 'ios_dt', apnsTok)
    await send(owner, target, 'first')
    await settled(fcmDevice, 1)
    await settled(apnsDevice, 1)
    const issued = fcm.tokensIssued
    fcm.revokeTokens()
    apns.expired.add(apns.providerTokens.at(-1)!)
    const seen = apns.providerTokens.length

    await send(owner, target, 'second')
    const [, fcmRow] = await settled(fcmDevice, 2)
    const [, apnsRow] = await settled(apnsDevice, 2)
    assert.equal(fcmRow.state, 'delivered')
    assert.equal(Number(fcmRow.attempts), 2)
    assert.equal(fcm.tokensIssued, issued + 1)
    assert.deepEqual(fcm.rejected, ['Request had invalid authentication credentials'])
    fcm.rejected.length = 0
    assert.equal(apnsRow.state, 'delivered')
    assert.equal(Number(apnsRow.attempts), 2)
    const [refused, renewed] = apns.providerTokens.slice(seen)
    assert.isTrue(apns.expired.has(refused))
    assert.notEqual(renewed, refused)
    assert.deepEqual(
      apnsFor(apns, apnsTok).map((request) => request.payload.aps.alert.body),
      ['first', 'second']
    )
  })

  test('a long message is cut to fit the providers’ 4 KiB payloads', async ({ assert }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1, { title: 'T'.repeat(150) })
    const [fcmTok, apnsTok] = [fcmToken(), apnsToken()]
    const fcmDevice = await register(bob, 'gcm_rid', fcmTok)
    const apnsDevice = await register(bob, 'ios_dt', apnsTok)
    // 3 bytes a character: the whole text alone would be 15 KiB.
    await send(owner, target, '€'.repeat(5000))
    const [fcmRow] = await settled(fcmDevice, 1)
    const [apnsRow] = await settled(apnsDevice, 1)
    assert.equal(fcmRow.state, 'delivered')
    assert.equal(apnsRow.state, 'delivered')
    const body = fcmFor(fcm, fcmTok)[0].notification.body as string
    assert.lengthOf(body, 200)
    assert.isTrue(body.endsWith('…'))
    assert.lengthOf(apnsFor(apns, apnsTok)[0].payload.aps.alert.title, 100)
  })

  test('a burst in one book collapses: a delivery followed by a newer one is not sent', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    const token = fcmToken()
    const device = await register(bob, 'gcm_rid', token)
    let release = () => {}
    fcm.gate = new Promise<void>((resolve) => (release = resolve))
    await send(owner, target, 'one')
    // The first notification is in flight at the provider while three more arrive.
    await waitFor(() => fcm.waiting === 1, 10_000, 'the first send to reach the fake')
    await send(owner, target, 'two')
    await send(owner, target, 'three')
    const last = await send(owner, target, 'four')
    release()
    const rows = await settled(device, 4)
    assert.deepEqual(
      rows.map((row) => row.state),
      ['delivered', 'cancelled', 'cancelled', 'delivered']
    )
    assert.include(rows[1].last_error, 'collapsed')
    const received = fcmFor(fcm, token)
    assert.deepEqual(
      received.map((message) => message.notification.body),
      ['one', 'four']
    )
    assert.equal(received[1].data.smid, String(last.createMessageId))
  })

  test('an archived book notifies only members with notifyWhenMsgInArchivedBook', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2)
    const bobDevice = await register(bob, 'gcm_rid', fcmToken())
    const carolDevice = await register(carol, 'gcm_rid', fcmToken())
    const prefs = await carol.call({
      req: 'updateBookUserPrefs',
      ...target,
      notifyWhenMsgInArchivedBook: 'true',
    })
    assert.equal(prefs.status, 'ok', JSON.stringify(prefs))
    const sent = await send(owner, target, 'last words')
    const archived = await owner.call({ req: 'archiveBook', ...target })
    assert.equal(archived.status, 'ok', JSON.stringify(archived))
    // An archived book takes no message from its members; the deliveries a
    // message there would cause are computed as in the writer's transaction.
    const push = await app.container.make(PushDeliveryService)
    const row = await db.from('book_messages').where('smid', sent.createMessageId).first()
    const entries = await db.transaction((trx) =>
      push.messageEntries(
        {
          kind: 'created',
          bookId: Number(row.book_id),
          b_o: target.b_o,
          b_c: target.b_c,
          row,
          actorId: owner.user.id,
          onBehalfOf: null,
          stamp: Number(row.sstamp),
        },
        trx
      )
    )
    assert.deepEqual(
      entries.map((entry) => entry.recipient),
      [`device:${carolDevice}`]
    )
    assert.notInclude(
      entries.map((entry) => entry.recipient),
      `device:${bobDevice}`
    )
  })

  test('devices of unsupported types are stored, listed as unsupported, never sent to', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    const pin = randomBytes(4).toString('hex')
    const blackberry = await register(bob, 'bb_dt', pin)
    const windows = await register(
      bob,
      'win_uri',
      `https://db5.notify.windows.com/?token=${randomBytes(12).toString('hex')}`
    )
    await send(owner, target, 'hello old phones')
    assert.lengthOf(await deliveriesOf(blackberry), 0)
    assert.lengthOf(await deliveriesOf(windows), 0)
    const push = await app.container.make(PushDeliveryService)
    const listed = await push.unsupportedDevices({ limit: 10_000 })
    const mine = listed.filter((device) => device.userId === bob.user.id)
    assert.deepEqual(
      mine.map((device) => [device.deviceId, device.deviceType]),
      [
        [blackberry, 'bb_dt'],
        [windows, 'win_uri'],
      ]
    )
    assert.include(mine[0].reason, 'no push provider exists for bb_dt')
  })
})
