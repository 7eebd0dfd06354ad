import type { EventRow, ReminderData } from '../models/records.js'
import { parseJson } from '../models/prefs.js'

const int = (value: unknown) => Math.trunc(Number(value ?? 0)) || 0

export const REMINDER_DEFAULTS: ReminderData = {
  email: false,
  sms: false,
  alarmMobile: false,
  alarm: false,
  time: 0,
  remindermember: 0,
}

export function serializeReminder(raw: string | null) {
  const stored = parseJson<Partial<ReminderData>>(raw, {})
  return {
    email: Boolean(stored.email ?? REMINDER_DEFAULTS.email),
    sms: Boolean(stored.sms ?? REMINDER_DEFAULTS.sms),
    alarmMobile: Boolean(stored.alarmMobile ?? REMINDER_DEFAULTS.alarmMobile),
    alarm: Boolean(stored.alarm ?? REMINDER_DEFAULTS.alarm),
    time: int(stored.time),
    remindermember: int(stored.remindermember) === 1 ? 1 : 0,
  }
}

/** The 2.9 fields of an event, as sendMsg takes them (times in unix seconds, UTC). */
export function serializeEventFields(row: EventRow, participants: { id: number; u_c: string }[]) {
  return {
    eventStart: int(row.event_start),
    eventEnd: int(row.event_end),
    eventTimezone: row.event_timezone,
    eventAllDay: Boolean(row.all_day),
    isBusy: Boolean(row.is_busy),
    eventParticipants: participants.map((participant) => ({
      id: participant.id,
      u_c: participant.u_c,
    })),
    reminderData: serializeReminder(row.reminder_data),
  }
}

/**
 * An event record of getBookEvents (the spec does not show one): the 2.9
 * fields plus its identity, its message and the book.
 */
export function serializeBookEvent(
  row: EventRow,
  context: {
    u_c: string
    b_o: string
    b_c: string
    msg: string
    uuid: string
    participants: { id: number; u_c: string }[]
  }
) {
  return {
    id: int(row.id),
    smid: int(row.smid),
    uuid: context.uuid,
    b_o: context.b_o,
    b_c: context.b_c,
    u_c: context.u_c,
    msg: context.msg,
    ...serializeEventFields(row, context.participants),
    created: int(row.created),
    lastModified: int(row.last_modified),
    sstamp: int(row.sstamp),
    del: Boolean(row.del),
  }
}
