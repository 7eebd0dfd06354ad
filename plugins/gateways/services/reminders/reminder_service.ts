import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { OutboxService } from '#core/outbox/outbox_service'
import { readQuery } from '#core/native_sql'
import type {
  AttemptResult,
  OutboxChannel,
  OutboxContributor,
  OutboxDelivery,
  OutboxEntry,
} from '#core/outbox/types'
import { MessageType } from '#core/socket/protocol'
import { SocketHub } from '#core/socket/hub'
import type { MessageChanging } from '#plugins/books/events'
import { TABLES, type ReminderData } from '#plugins/books/models/records'
import {
  OWNER_PREF_DEFAULTS,
  OWNER_PREF_KINDS,
  parseJson,
  typedPrefs,
} from '#plugins/books/models/prefs'
import { serializeReminder } from '#plugins/books/serializers/event_serializer'
import { smsNumber } from '../copies/recipients.js'
import { MailOutService } from '../mail_out/mail_out_service.js'
import { PushDeliveryService } from '../push/push_delivery_service.js'
import { SmsOutboxService } from '../sms_outbox_service.js'
import { reminderTexts } from './reminder_texts.js'

/** The outbox channel of a reminder's schedule: one delivery per event and schedule. */
export const REMINDER_CHANNEL = 'reminder'
/** The outbox channel of the web alarm: a system message to a user's sockets and SSE channel. */
export const ALARM_CHANNEL = 'alarm'

/** What a scheduled reminder's row carries: the event's message and the time it is due. */
interface ReminderPayload {
  smid: number
  dueAt: number
}

/** What an alarm delivery's row carries: the frame's content. */
interface AlarmPayload {
  userId: number
  u_c: string
  b_o: string
  b_c: string
  smid: number
  uuid: string
  msg: string
  eventStart: number
  time: number
}

/** An event's reminder, as it stands now: when it is due and what it asks for. */
interface ReminderPlan {
  smid: number
  dueAt: number
  eventStart: number
  eventTimezone: string
  reminder: ReminderData
  bookId: number
  creatorId: number
  eventId: number
}

const keyPrefix = (smid: number) => `reminder:${smid}:`

/**
 * Event reminders (issue 19 item 8). A message with an event whose
 * reminderData asks for a reminder (email, sms, alarmMobile or alarm) gets,
 * in its own transaction, one `reminder` outbox delivery due at eventStart −
 * time (notBefore); an edit cancels the waiting one (by key prefix, in the
 * edit's transaction) and schedules the new time, a deletion cancels it. The
 * state is the outbox's rows: a restart, a lost job or a Redis flush loses
 * nothing (the sweeper dispatches a due row whose job is gone).
 *
 * When it is due, the reminder checks the event still stands as scheduled
 * and fans out, in one transaction, to the creator (remindermember 0) or the
 * creator and every participant (1) who are still members: e-mail, SMS,
 * push (alarmMobile) and the web alarm, each keyed by event, due time and
 * user, so a second run (a lapsed lease) writes nothing twice.
 */
@inject()
export class ReminderService {
  constructor(
    private outbox: OutboxService,
    private mailOut: MailOutService,
    private sms: SmsOutboxService,
    private push: PushDeliveryService,
    private hub: SocketHub
  ) {}

  /** The contribution to books' in-transaction topic (created, edited and deleted messages). */
  messageContributor(): OutboxContributor<MessageChanging> {
    return {
      // An edit or a deletion may end a reminder; a new message needs an event to have one.
      wants: (event) =>
        event.kind !== 'created' || event.row === undefined || Boolean(Number(event.row.has_event)),
      entries: (event, client) => this.schedule(event, client),
    }
  }

  /** Inside the message's transaction: cancels the waiting reminder, answers the new one. */
  async schedule(event: MessageChanging, client: QueryClientContract): Promise<OutboxEntry[]> {
    const smid = Number(event.row.smid)
    // A message that never had an event (its event row stays, deleted, once it had one) has nothing to cancel.
    if (event.kind !== 'created' && (await everHadEvent(client, event)))
      await this.outbox.cancelByKeyPrefix(client, REMINDER_CHANNEL, keyPrefix(smid))
    if (event.kind === 'deleted' || Number(event.row.del) || !Number(event.row.has_event)) return []
    const plan = await planOf(client, smid)
    if (!plan) return []
    const payload: ReminderPayload = { smid, dueAt: plan.dueAt }
    return [
      {
        channel: REMINDER_CHANNEL,
        recipient: `message:${smid}`,
        // The write's stamp: each schedule is a row of its own (a cancelled one is never revived).
        idempotencyKey: `${keyPrefix(smid)}${event.stamp}`,
        eventType: 'event.reminder',
        payload,
        notBefore: plan.dueAt,
      },
    ]
  }

  /** The `reminder` outbox channel: the fan-out when a reminder is due. */
  reminderChannel(): OutboxChannel {
    return { send: (delivery) => this.fire(delivery) }
  }

  /** The `alarm` outbox channel: the web alarm, to the user's sockets and SSE channel (any instance). */
  alarmChannel(): OutboxChannel {
    return { send: async (delivery) => this.alarm(delivery.payload as AlarmPayload) }
  }

  private async fire(delivery: OutboxDelivery): Promise<AttemptResult> {
    const { smid, dueAt } = delivery.payload as ReminderPayload
    const plan = await planOf(db.connection(), smid)
    // An edit or deletion cancels the waiting row in its transaction; this catches a race with one.
    if (!plan || plan.dueAt !== dueAt)
      return { outcome: 'cancelled', error: 'the event was changed or deleted' }
    const afterCommit: (() => unknown)[] = []
    const counts = await db.transaction((trx) =>
      this.fanOut(trx, plan, (callback) => afterCommit.push(callback))
    )
    for (const callback of afterCommit) await callback()
    return {
      outcome: 'delivered',
      response: Object.entries(counts)
        .map(([channel, count]) => `${channel} ${count}`)
        .join(', '),
    }
  }

  /** Writes the reminder's deliveries to each person concerned, in one transaction. */
  private async fanOut(
    trx: QueryClientContract,
    plan: ReminderPlan,
    afterCommit: (callback: () => unknown) => void
  ) {
    const { reminder } = plan
    const people = await peopleOf(trx, plan)
    const context = await contextOf(trx, plan)
    const counts = { mail: 0, sms: 0, push: 0, alarm: 0 }
    if (!context || people.length === 0) return counts
    const texts = reminderTexts({
      ...context,
      eventStart: plan.eventStart,
      timezone: plan.eventTimezone,
    })
    const key = (user: number, channel: string) =>
      `${keyPrefix(plan.smid)}${plan.dueAt}:${channel}:${user}`
    const entries: OutboxEntry[] = []
    for (const person of people) {
      if (reminder.email && person.email && this.mailOut.enabled) {
        entries.push(
          this.mailOut.entry({
            to: person.email,
            subject: texts.subject,
            text: texts.mail,
            headers: { 'Auto-Submitted': 'auto-generated' },
            idempotencyKey: key(person.id, 'mail'),
            eventType: 'event.reminder',
          })
        )
        counts.mail++
      }
      const phone = reminder.sms ? smsNumber(person.phone) : null
      if (phone) {
        await this.sms.enqueue(
          trx,
          {
            to: phone,
            text: texts.sms,
            bookId: plan.bookId,
            kind: 'reminder',
            idempotencyKey: key(person.id, 'sms'),
          },
          afterCommit
        )
        counts.sms++
      }
      if (reminder.alarm) {
        const payload: AlarmPayload = {
          userId: person.id,
          u_c: context.creatorCode,
          b_o: context.b_o,
          b_c: context.b_c,
          smid: plan.smid,
          uuid: context.uuid,
          msg: context.msg,
          eventStart: plan.eventStart,
          time: reminder.time,
        }
        entries.push({
          channel: ALARM_CHANNEL,
          recipient: `user:${person.id}`,
          idempotencyKey: key(person.id, 'alarm'),
          eventType: 'event.reminder',
          payload,
        })
        counts.alarm++
      }
    }
    if (reminder.alarmMobile) {
      const pushes = await this.push.entriesForUsers(trx, {
        userIds: people.map((person) => person.id),
        bookId: plan.bookId,
        title: context.title,
        body: texts.push,
        data: {
          type: 'reminder',
          b_o: context.b_o,
          b_c: context.b_c,
          smid: String(plan.smid),
          uuid: context.uuid,
          eventStart: String(plan.eventStart),
        },
        collapseKey: `reminder-${plan.smid}`,
        eventType: 'event.reminder',
        idempotencyKey: `${keyPrefix(plan.smid)}${plan.dueAt}:push`,
      })
      entries.push(...pushes)
      counts.push = pushes.length
    }
    await this.outbox.enqueue(trx, entries, afterCommit)
    return counts
  }

  private alarm(payload: AlarmPayload): AttemptResult {
    this.hub.deliver({
      userIds: [payload.userId],
      frame: {
        type: MessageType.SYSTEM_MESSAGE,
        u_c: payload.u_c,
        msg: 'alarm',
        b_o: payload.b_o,
        b_c: payload.b_c,
        param: 'reminder',
        value: {
          smid: payload.smid,
          uuid: payload.uuid,
          msg: payload.msg,
          eventStart: payload.eventStart,
          time: payload.time,
        },
      },
    })
    // Sockets and SSE channels get it if connected; nobody acknowledges a system message.
    return { outcome: 'delivered' }
  }
}

/**
 * The event's reminder as it stands: null when the message or its event is
 * gone, the reminder asks for nothing, or the event has started.
 */
async function planOf(client: QueryClientContract, smid: number): Promise<ReminderPlan | null> {
  const [row] = await readQuery(
    `SELECT e.id, e.event_start, e.event_timezone, e.reminder_data, m.book_id, m.creator_id` +
      ` FROM ${TABLES.events} e JOIN ${TABLES.messages} m ON m.smid = e.smid` +
      ` WHERE e.smid = ? AND e.del = ? AND m.del = ? LIMIT 1`,
    [smid, false, false],
    client
  )
  if (!row) return null
  const reminder = serializeReminder(row.reminder_data)
  if (!reminder.email && !reminder.sms && !reminder.alarmMobile && !reminder.alarm) return null
  const eventStart = Number(row.event_start)
  if (eventStart * 1000 <= Date.now()) return null
  return {
    smid,
    dueAt: (eventStart - reminder.time) * 1000,
    eventStart,
    eventTimezone: String(row.event_timezone || 'UTC'),
    reminder,
    bookId: Number(row.book_id),
    creatorId: Number(row.creator_id),
    eventId: Number(row.id),
  }
}

async function everHadEvent(client: QueryClientContract, event: MessageChanging) {
  if (Number(event.row.has_event)) return true
  const [row] = await readQuery(
    `SELECT id FROM ${TABLES.events} WHERE smid = ? LIMIT 1`,
    [event.row.smid],
    client
  )
  return Boolean(row)
}

/** The creator, and with remindermember 1 the participants, who are still accepted members. */
async function peopleOf(client: QueryClientContract, plan: ReminderPlan) {
  const ids = new Set([plan.creatorId])
  if (plan.reminder.remindermember === 1) {
    const participants = await client
      .from(TABLES.participants)
      .where('event_id', plan.eventId)
      .select('user_id')
    for (const participant of participants) ids.add(Number(participant.user_id))
  }
  const rows = await client
    .from(`${TABLES.members} as m`)
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.book_id', plan.bookId)
    .whereIn('m.user_id', [...ids])
    .where('m.invite', 'accepted')
    .where('m.del', false)
    .whereNull('u.disabled_at')
    .select('u.id', 'u.email', 'u.phone')
    .orderBy('u.id')
  return rows.map((row) => ({
    id: Number(row.id),
    email: row.email ? String(row.email) : null,
    phone: row.phone ? String(row.phone) : null,
  }))
}

/** The book and message a reminder speaks of. */
async function contextOf(client: QueryClientContract, plan: ReminderPlan) {
  const row = await client
    .from(`${TABLES.messages} as m`)
    .join(`${TABLES.books} as b`, 'b.id', 'm.book_id')
    .join('users as o', 'o.id', 'b.owner_id')
    .join('users as c', 'c.id', 'm.creator_id')
    .where('m.smid', plan.smid)
    .select('m.msg', 'm.uuid', 'b.code', 'b.owner_prefs', 'o.code as owner', 'c.code as creator')
    .first()
  if (!row) return null
  const ownerPrefs = typedPrefs(
    OWNER_PREF_KINDS,
    OWNER_PREF_DEFAULTS,
    parseJson(row.owner_prefs, null)
  )
  return {
    b_o: String(row.owner),
    b_c: String(row.code),
    title: String(ownerPrefs.title || row.code),
    msg: String(row.msg ?? ''),
    uuid: String(row.uuid),
    creatorCode: String(row.creator),
  }
}
