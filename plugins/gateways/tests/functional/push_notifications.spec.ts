import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { OutboxService } from '#core/outbox/outbox_service'
import { book, client, share, type Client } from '#plugins/books/tests/helpers/books'
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

function ok(answer: Record<string, any>) {
  if (answer.status !== 'ok') throw new Error(`expected ok: ${JSON.stringify(answer)}`)
  return answer
}

/** A table "Tasks" with a comments field in the owner's book, and one row the owner wrote. */
async function taskTable(owner: Client, target: { b_o: string; b_c: string }) {
  const table = ok(
    await owner.call({
      req: 'createTable',
      ...target,
      name: 'Tasks',
      fields: JSON.stringify([
        { name: 'Name', type: 'shorttext' },
        { name: 'Talk', type: 'comments' },
      ]),
    })
  )
  const catId = table.catId as number
  const categories = ok(
    await owner.call({ req: 'getBookTables', ...target, includeFields: 'true' })
  ).bookTables.categories
  const fields = categories.find((category: any) => category.id === catId).fields
  const fieldId = (name: string) => fields.find((field: any) => field.name === name).id as number
  const rows = ok(
    await owner.call({
      req: 'createOrUpdateTableRows',
      b_o: target.b_o,
      rows: JSON.stringify({ tmp1: { [fieldId('Name')]: 'paint the door' } }),
    })
  )
  return { catId, talk: fieldId('Talk'), rowId: rows.newRows[0].id as number }
}

const comment = (who: Client, fieldId: number, rowId: number, m: string) =>
  who.call({ req: 'editTableValueComments', fieldId, rowId: String(rowId), m }).then(ok)

test.group('gateways: push of invitations and comments', (group) => {
  const fakes = usePushFakes(group)

  test('an invitation reaches the invited user’s devices, not the inviter’s', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner, { title: 'Family' })
    const invitee = await client()
    const [inviteeFcm, inviteeApns, ownerFcm] = [fcmToken(), apnsToken(), fcmToken()]
    const fcmDevice = await register(invitee, 'gcm_rid', inviteeFcm)
    const apnsDevice = await register(invitee, 'ios_dt', inviteeApns)
    const ownerDevice = await register(owner, 'gcm_rid', ownerFcm)

    ok(await owner.call({ req: 'inviteMember', ...target, member: invitee.code, right: 2 }))
    const [delivery] = await settled(fcmDevice, 1)
    await settled(apnsDevice, 1)
    assert.equal(delivery.event_type, 'invitation.created')
    const [message] = fcmFor(fakes.fcm, inviteeFcm)
    assert.equal(message.notification.title, 'Family')
    assert.include(message.notification.body, 'invites you to Family')
    assert.deepEqual(message.data, {
      type: 'invitation',
      b_o: target.b_o,
      b_c: target.b_c,
      u_c: owner.code,
    })
    const [request] = apnsFor(fakes.apns, inviteeApns)
    assert.equal(request.payload.type, 'invitation')
    assert.equal(request.payload.aps.alert.title, 'Family')
    assert.lengthOf(await deliveriesOf(ownerDevice), 0)
    // Accepting notifies nobody; a refused invitation cannot be pushed twice for one write.
    ok(await invitee.call({ req: 'acceptInvitation', ...target }))
    assert.lengthOf(await deliveriesOf(ownerDevice), 0)
    assert.lengthOf(await deliveriesOf(fcmDevice), 1)
  })

  test('an invitation to a confidential book carries no inviter', async ({ assert }) => {
    const owner = await client()
    const target = await book(owner, {
      title: 'Board',
      ownerPrefs: JSON.stringify({ notifyMobileConfidential: true }),
    })
    const invitee = await client()
    const token = fcmToken()
    const device = await register(invitee, 'gcm_rid', token)
    ok(await owner.call({ req: 'inviteMember', ...target, member: invitee.code }))
    await settled(device, 1)
    const [message] = fcmFor(fakes.fcm, token)
    assert.deepEqual(message.notification, { title: 'Board', body: 'New invitation' })
    // The inviter's code is the book's b_o; the inviter's own field is gone.
    assert.notProperty(message.data, 'u_c')
  })

  test('a comment reaches the row’s author and the cell’s earlier commenters, never the commenter', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol, dave],
    } = await sharedWith(3, { title: 'Home' })
    const { talk, rowId } = await taskTable(owner, target)
    const tokens = { owner: fcmToken(), bob: apnsToken(), carol: fcmToken(), dave: fcmToken() }
    const devices = {
      owner: await register(owner, 'gcm_rid', tokens.owner),
      bob: await register(bob, 'ios_dt_v2', tokens.bob),
      carol: await register(carol, 'gcm_rid', tokens.carol),
      dave: await register(dave, 'gcm_rid', tokens.dave),
    }

    // Bob comments first: the row's author (the owner) is told.
    const first = await comment(bob, talk, rowId, 'which colour?')
    const [toOwner] = await settled(devices.owner, 1)
    assert.equal(toOwner.event_type, 'comment.created')
    const [message] = fcmFor(fakes.fcm, tokens.owner)
    assert.equal(message.notification.title, 'Home · Tasks')
    assert.include(message.notification.body, 'which colour?')
    assert.deepEqual(message.data, {
      type: 'comment',
      b_o: target.b_o,
      b_c: target.b_c,
      catId: String(message.data.catId),
      fieldId: String(talk),
      rowId: String(rowId),
      commentId: String(first.id),
      u_c: bob.code,
    })
    // Carol answers: the owner (author) and Bob (in the conversation); not Carol, not Dave.
    await comment(carol, talk, rowId, 'green')
    await settled(devices.owner, 2)
    const [toBob] = await settled(devices.bob, 1)
    assert.equal(toBob.state, 'delivered')
    assert.equal(apnsFor(fakes.apns, tokens.bob)[0].payload.aps.alert.body.endsWith('green'), true)
    assert.lengthOf(await deliveriesOf(devices.carol), 0)
    assert.lengthOf(await deliveriesOf(devices.dave), 0)
  })

  test('a comment skips members who cannot see the table, and a confidential book’s has no text', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner, {
      ownerPrefs: JSON.stringify({ notifyMobileConfidential: true }),
    })
    const [writer, editor] = [await client(), await client()]
    await share(owner, target, writer, 2)
    await share(owner, target, editor, 3)
    const { catId, talk, rowId } = await taskTable(owner, target)
    const writerToken = fcmToken()
    const ownerToken = fcmToken()
    const writerDevice = await register(writer, 'gcm_rid', writerToken)
    const ownerDevice = await register(owner, 'gcm_rid', ownerToken)
    await comment(writer, talk, rowId, 'first look')
    await settled(ownerDevice, 1)
    // The table is hidden below RIGHT_READWRITEDELETE now: the writer is out of the conversation.
    ok(await owner.call({ req: 'updateTable', catId, rights: JSON.stringify({ select: 3 }) }))
    await comment(editor, talk, rowId, 'the code is 4321')
    await settled(ownerDevice, 2)
    assert.lengthOf(await deliveriesOf(writerDevice), 0)
    const latest = fcmFor(fakes.fcm, ownerToken).at(-1)!
    assert.equal(latest.notification.body, 'New comment')
    assert.notInclude(JSON.stringify(latest), '4321')
    assert.notInclude(JSON.stringify(latest), editor.code)
  })

  test('entriesForUsers (reminders): every device of the users, book prefs applied, scheduled ones unordered', async ({
    assert,
  }) => {
    const {
      target,
      members: [bob, carol],
    } = await sharedWith(2)
    const web = fakes.web.subscribe()
    const bobDevices = [
      await register(bob, 'gcm_rid', fcmToken()),
      await register(bob, 'ios_dt', apnsToken()),
      await register(bob, 'web_push', web.json),
    ]
    const carolDevice = await register(carol, 'gcm_rid', fcmToken())
    ok(await carol.call({ req: 'updateBookUserPrefs', ...target, notifyMobile: 'false' }))
    const row = await db.from('books').where('code', target.b_c).select('id').first()
    const push = await app.container.make(PushDeliveryService)
    const notBefore = Date.now() + 3_600_000
    const entries = await db.transaction((trx) =>
      push.entriesForUsers(trx, {
        userIds: [bob.user.id, carol.user.id, bob.user.id],
        bookId: Number(row.id),
        title: 'Dentist',
        body: 'in 1 hour',
        data: { type: 'reminder', eventId: '7' },
        collapseKey: 'reminder-7',
        eventType: 'event.reminder',
        idempotencyKey: 'reminder:7:60',
        notBefore,
      })
    )
    assert.sameMembers(
      entries.map((entry) => entry.channel),
      ['push_fcm', 'push_apns', 'push_web']
    )
    assert.sameMembers(
      entries.map((entry) => entry.recipient),
      bobDevices.map((id) => `device:${id}`)
    )
    for (const entry of entries) {
      assert.isNull(entry.orderKey)
      assert.equal((entry as { notBefore?: number }).notBefore, notBefore)
      assert.match(entry.idempotencyKey, /^reminder:7:60:device:\d+$/)
      assert.deepInclude(entry.payload as object, { title: 'Dentist', body: 'in 1 hour' })
    }
    assert.notInclude(
      entries.map((entry) => entry.recipient),
      `device:${carolDevice}`
    )
    // Without a book no prefs apply; confidential drops the text.
    const secret = await db.transaction((trx) =>
      push.entriesForUsers(trx, {
        userIds: [carol.user.id],
        title: 'Dentist',
        body: 'bring the papers',
        data: { type: 'reminder', u_c: bob.code },
        collapseKey: 'reminder-8',
        eventType: 'event.reminder',
        idempotencyKey: 'reminder:8:0',
        confidential: true,
      })
    )
    assert.lengthOf(secret, 1)
    assert.deepInclude(secret[0].payload as object, {
      body: 'Reminder',
      data: { type: 'reminder' },
    })
    // Enqueued as the reminders service does: sent by the outbox like any other.
    const outbox = await app.container.make(OutboxService)
    await db.transaction((trx) =>
      outbox.enqueue(
        trx,
        secret.map((entry) => ({ ...entry, idempotencyKey: `${entry.idempotencyKey}:now` })),
        (callback) =>
          trx.after('commit', async () => {
            await callback()
          })
      )
    )
    const [delivery] = await settled(carolDevice, 1)
    assert.equal(delivery.state, 'delivered')
  })
})
