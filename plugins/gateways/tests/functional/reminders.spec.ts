import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { waitFor } from '#tests/helpers/queue'
import { book, client, send, share, type Client } from '#plugins/books/tests/helpers/books'
import { uniquePhone, withPhone } from '#plugins/gateways/tests/helpers/gateways'
import {
  deliveriesOf,
  fcmToken,
  register,
  usePushFakes,
} from '#plugins/gateways/tests/helpers/push'
import {
  startSmtpRelay,
  useRelay,
  type SmtpRelay,
} from '#plugins/gateways/tests/helpers/smtp_relay'
import { attached, ensureSocketEndpoint } from '#tests/functional/socket/socket_client'

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** An event starting `startIn` seconds from now whose reminder comes `time` seconds before. */
function event(
  startIn: number,
  reminder: Record<string, unknown>,
  participants: Client[] = [],
  time = 60
) {
  return JSON.stringify({
    eventStart: nowSeconds() + startIn,
    eventEnd: nowSeconds() + startIn + 3600,
    eventTimezone: 'Europe/Paris',
    eventParticipants: participants.map((who) => ({ id: who.user.id })),
    reminderData: { time, ...reminder },
  })
}

/** Starts `dueIn` seconds from now (+ the reminder's 60 s), so the reminder is due in about dueIn s. */
const dueIn = (seconds: number) => seconds + 60

const reminderRows = (smid: number) =>
  db
    .from('outbox_deliveries')
    .where('channel', 'reminder')
    .where('recipient', `message:${smid}`)
    .orderBy('id')

/** Polls (generously) until the address has `count` reminder mails. */
function remindersTo(relay: SmtpRelay, address: string, count = 1) {
  return waitFor(
    () => {
      const mails = relay.to(address).filter((item) => item.mail.subject?.startsWith('Reminder: '))
      return mails.length >= count && mails
    },
    60_000,
    `${count} reminder mail(s) to ${address}`
  )
}

async function sharedWith(count: number) {
  const owner = await client()
  const target = await book(owner, { title: 'Team' })
  const members: Client[] = []
  for (let index = 0; index < count; index++) {
    const member = await client()
    await share(owner, target, member)
    members.push(member)
  }
  return { owner, target, members }
}

test.group('gateways: event reminders', (group) => {
  let relay: SmtpRelay
  group.setup(async () => {
    const started = await startSmtpRelay()
    relay = started.relay
    const restore = useRelay(relay, started.account)
    await ensureSocketEndpoint()
    return async () => {
      restore()
      await relay.close()
    }
  })

  test('the creator alone (remindermember 0) gets the e-mail and the web alarm at eventStart − time', async ({
    assert,
    cleanup,
  }) => {
    const {
      owner,
      target,
      members: [bob],
    } = await sharedWith(1)
    const socket = await attached(owner.session)
    cleanup(() => socket.ws.close())
    const sent = await send(owner, target, 'stand-up\nroom 4', {
      event: event(dueIn(2), { email: true, alarm: true, remindermember: 0 }, [bob]),
    })
    const [scheduled] = await reminderRows(sent.createMessageId)
    assert.equal(scheduled.state, 'pending')
    const dueAt = Number(scheduled.next_attempt_at)

    const [mail] = await remindersTo(relay, owner.user.email!)
    assert.match(mail.mail.subject!, /^Reminder: stand-up, /)
    assert.include(mail.mail.text!, 'Reminder of an event of the book Team:')
    assert.include(mail.mail.text!, 'stand-up\nroom 4')
    // Never before it was due.
    assert.isAtLeast(Number(mail.mail.date!.getTime()), Math.floor(dueAt / 1000) * 1000)
    const alarm = await socket.next(
      (frame) => frame.type === 11 && frame.msg === 'alarm',
      30_000,
      'the web alarm'
    )
    assert.deepInclude(alarm, { b_o: target.b_o, b_c: target.b_c, param: 'reminder' })
    assert.equal(alarm.value.smid, sent.createMessageId)
    assert.equal(alarm.value.msg, 'stand-up\nroom 4')
    assert.equal(alarm.value.time, 60)
    assert.lengthOf(relay.to(bob.user.email!), 0)
    const [fired] = await reminderRows(sent.createMessageId)
    assert.equal(fired.state, 'delivered')
  }).timeout(90_000)

  test('remindermember 1: the creator and every participant, by e-mail and SMS', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2)
    await withPhone(bob, uniquePhone())
    const sent = await send(owner, target, 'review', {
      event: event(dueIn(1), { email: true, sms: true, remindermember: 1 }, [bob]),
    })
    await remindersTo(relay, owner.user.email!)
    await remindersTo(relay, bob.user.email!)
    const sms = await waitFor(
      () =>
        db
          .from('gateways_sms_outbox')
          .where('idempotency_key', 'like', `reminder:${sent.createMessageId}:%`),
      30_000,
      'the SMS reminder'
    )
    assert.lengthOf(sms, 1)
    assert.equal(sms[0].kind, 'reminder')
    assert.equal(sms[0].phone, bob.user.phone)
    assert.match(sms[0].text, /^Reminder \(Team\): review, /)
    // Carol is a member but no participant.
    assert.lengthOf(relay.to(carol.user.email!), 0)
  }).timeout(90_000)

  test('editing the event reschedules its reminder; the old one is cancelled, one mail arrives', async ({
    assert,
  }) => {
    const { owner, target } = await sharedWith(0)
    const sent = await send(owner, target, 'planning', {
      event: event(dueIn(3600), { email: true }),
    })
    const [first] = await reminderRows(sent.createMessageId)
    assert.equal(first.state, 'pending')

    const edited = await owner.call({
      req: 'sendMsg',
      ...target,
      msg_id: sent.createMessageId,
      msg: 'planning (moved)',
      event: event(dueIn(1), { email: true }),
    })
    assert.equal(edited.status, 'ok')
    const rows = await reminderRows(sent.createMessageId)
    assert.lengthOf(rows, 2, JSON.stringify([edited, rows]))
    assert.equal(rows[0].state, 'cancelled')
    assert.isBelow(Number(rows[1].next_attempt_at), Number(rows[0].next_attempt_at))

    const [mail] = await remindersTo(relay, owner.user.email!)
    assert.match(mail.mail.subject!, /^Reminder: planning \(moved\), /)
    await waitFor(
      async () => {
        const [, rescheduled] = await reminderRows(sent.createMessageId)
        return rescheduled.state === 'delivered'
      },
      30_000,
      'the rescheduled reminder to be delivered'
    )
    assert.lengthOf(relay.to(owner.user.email!), 1)
  }).timeout(90_000)

  test('deleting the message, or removing its reminder, cancels the waiting reminder', async ({
    assert,
  }) => {
    const { owner, target } = await sharedWith(0)
    const deleted = await send(owner, target, 'to delete', {
      event: event(dueIn(3600), { email: true }),
    })
    const gone = await owner.call({ req: 'deleteMsg', ...target, msg_id: deleted.createMessageId })
    assert.equal(gone.status, 'ok', JSON.stringify(gone))
    const [row] = await reminderRows(deleted.createMessageId)
    assert.equal(row.state, 'cancelled')

    const quiet = await send(owner, target, 'to quiet', {
      event: event(dueIn(3600), { email: true }),
    })
    const edited = await owner.call({
      req: 'sendMsg',
      ...target,
      msg_id: quiet.createMessageId,
      msg: 'to quiet',
      event: event(dueIn(3600), { email: false }),
    })
    assert.equal(edited.status, 'ok')
    const rows = await reminderRows(quiet.createMessageId)
    assert.deepEqual(
      rows.map((item) => item.state),
      ['cancelled']
    )
  })

  test('an event without a reminder, or already started, schedules nothing', async ({ assert }) => {
    const { owner, target } = await sharedWith(0)
    const none = await send(owner, target, 'no reminder', { event: event(dueIn(3600), {}) })
    const past = await send(owner, target, 'started', {
      event: event(-60, { email: true }),
    })
    assert.lengthOf(await reminderRows(none.createMessageId), 0)
    assert.lengthOf(await reminderRows(past.createMessageId), 0)
  })
})

test.group('gateways: event reminders to phones (alarmMobile)', (group) => {
  const fakes = usePushFakes(group)

  test('the participants’ devices get a push when the reminder is due, the others’ do not', async ({
    assert,
  }) => {
    const {
      owner,
      target,
      members: [bob, carol],
    } = await sharedWith(2)
    const token = fcmToken()
    const ownerDevice = await register(owner, 'gcm_rid', token)
    const bobDevice = await register(bob, 'gcm_rid', fcmToken())
    const carolDevice = await register(carol, 'gcm_rid', fcmToken())
    const sent = await send(owner, target, 'dentist', {
      event: event(dueIn(1), { alarmMobile: true, remindermember: 1 }, [bob]),
    })
    // The message itself notifies bob and carol; the reminder's pushes are keyed by the event.
    const reminderPushes = (deviceId: number) =>
      deliveriesOf(deviceId).where('idempotency_key', 'like', `reminder:${sent.createMessageId}:%`)
    for (const device of [ownerDevice, bobDevice])
      await waitFor(
        async () => {
          const rows = await reminderPushes(device)
          return rows.length === 1 && rows[0].state === 'delivered'
        },
        30_000,
        `the reminder's push to device ${device}`
      )
    const [toOwner] = fakes.fcm.received.filter((message) => message.token === token)
    assert.equal(toOwner.data.type, 'reminder')
    assert.equal(toOwner.data.smid, String(sent.createMessageId))
    assert.equal(toOwner.notification.title, 'Team')
    assert.match(toOwner.notification.body, /^dentist, /)
    assert.lengthOf(await reminderPushes(carolDevice), 0)
  }).timeout(60_000)
})
