import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import vine from '@vinejs/vine'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { list } from '#core/rpc/wire'
import { UserService } from '#core/services/user_service'
import {
  TABLES,
  nowSeconds,
  type EventInput,
  type EventRow,
  type ReminderData,
} from '../models/records.js'
import { coercePref } from '../models/prefs.js'
import { serializeBookEvent } from '../serializers/event_serializer.js'
import { BookAccessService, type BookRef } from './book_access_service.js'
import { chunks } from './book_queries.js'

const invalid = (message: string) =>
  rpcError('INVALID_PARAMETER', `Invalid parameter event: ${message}`, { field: 'event' })

/**
 * Whether a parameter is nested (bracket form or JSON): an object or an array,
 * where a scalar is expected. Bracket form makes objects without a prototype,
 * which String() and Number() cannot convert: they are refused first.
 */
const isNested = (value: unknown) => value !== null && typeof value === 'object'

/** Unix seconds from unix seconds, unix milliseconds, or an ISO 8601 date. */
export function toUnixSeconds(value: unknown): number | null {
  if (value === null || value === undefined || value === '' || isNested(value)) return null
  const text = String(value).trim()
  if (/^-?\d+(\.\d+)?$/.test(text)) {
    const number = Number(text)
    // Milliseconds are 1000 times larger than any plausible date in seconds.
    return Math.trunc(Math.abs(number) >= 1e11 ? number / 1000 : number)
  }
  const parsed = Date.parse(text)
  return Number.isNaN(parsed) ? null : Math.trunc(parsed / 1000)
}

const isTimezone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/**
 * The event's participant list in any list form (docs/spec/client-facts.md,
 * "Transport"): a JSON array or its text, bracket form, a comma list.
 */
const eventLists = vine.compile(vine.object({ eventParticipants: list().optional() }))

/** A message's live event with its participants (EventService.forMessages). */
export interface MessageEventView {
  row: EventRow
  participants: { id: number; u_c: string }[]
}

/** getBookEvents' filter: `eventIds` and `participants` are lists as the wire rule list() reads them. */
export interface EventFilter {
  dateMin?: string
  dateMax?: string
  limit?: number
  page?: number
  eventIds?: unknown[]
  participants?: unknown[]
}

/**
 * Calendar events (spec 2.9): at most one per message, written in the
 * message's transaction; participants must belong to the book.
 */
@inject()
export class EventService {
  constructor(
    private users: UserService,
    private access: BookAccessService
  ) {}

  /**
   * The `event` parameter of sendMsg: a JSON string or an object (bracket
   * form). Undefined when absent, null when it asks to remove the event.
   */
  async parse(raw: unknown, book: BookRef): Promise<EventInput | null | undefined> {
    if (raw === undefined || raw === '') return undefined
    let source: Record<string, unknown> | null
    if (typeof raw === 'string') {
      const text = raw.trim()
      if (text === 'null' || text === '{}' || text === '[]') return null
      try {
        source = JSON.parse(text)
      } catch {
        throw invalid('not valid JSON')
      }
    } else {
      source = raw as Record<string, unknown>
    }
    if (source === null) return null
    if (typeof source !== 'object' || Array.isArray(source)) throw invalid('expected a JSON object')

    const eventStart = toUnixSeconds(source.eventStart)
    if (eventStart === null) throw invalid('eventStart is missing or not a date')
    const eventEnd =
      source.eventEnd === undefined || source.eventEnd === ''
        ? eventStart
        : toUnixSeconds(source.eventEnd)
    if (eventEnd === null) throw invalid('eventEnd is not a date')
    if (eventEnd < eventStart) throw invalid('eventEnd is before eventStart')
    if (isNested(source.eventTimezone)) throw invalid('eventTimezone must be a time zone name')
    const eventTimezone = source.eventTimezone ? String(source.eventTimezone).trim() : 'UTC'
    if (!isTimezone(eventTimezone)) throw invalid(`unknown eventTimezone ${eventTimezone}`)

    const flag = (value: unknown) =>
      (coercePref('boolean', value ?? false) as boolean | undefined) ?? false
    const reminder = (source.reminderData ?? {}) as Record<string, unknown>
    if (typeof reminder !== 'object') throw invalid('reminderData must be an object')
    const time =
      reminder.time === undefined || reminder.time === ''
        ? 0
        : isNested(reminder.time)
          ? Number.NaN
          : Number(reminder.time)
    if (!Number.isInteger(time) || time < 0)
      throw invalid('reminderData.time must be a number of seconds')
    const reminderData: ReminderData = {
      email: flag(reminder.email),
      sms: flag(reminder.sms),
      alarmMobile: flag(reminder.alarmMobile),
      alarm: flag(reminder.alarm),
      time,
      remindermember:
        !isNested(reminder.remindermember) && Number(reminder.remindermember) === 1 ? 1 : 0,
    }

    return {
      eventStart,
      eventEnd,
      eventTimezone,
      eventAllDay: flag(source.eventAllDay),
      isBusy: flag(source.isBusy),
      participantIds: await this.participantIds(await participantList(source), book),
      reminderData,
    }
  }

  /** Participants given as {id} objects, user ids or user codes; each must be a member of the book. */
  private async participantIds(items: unknown[], book: BookRef): Promise<number[]> {
    const keys = items.map((item) =>
      item !== null && typeof item === 'object' ? (item as Record<string, unknown>).id : item
    )
    if (keys.length === 0) return []
    const ids = new Set<number>()
    const codes = new Set<string>()
    for (const key of keys) {
      if (isNested(key)) throw invalid('a participant id must be a user id or code')
      const text = String(key ?? '').trim()
      if (text === '') throw invalid('a participant has no id')
      if (/^\d+$/.test(text)) ids.add(Number(text))
      else codes.add(text)
    }
    const members = await db
      .from(`${TABLES.members} as bm`)
      .join('users as u', 'u.id', 'bm.user_id')
      .where('bm.book_id', book.id)
      .where('bm.del', false)
      .where((query) => {
        query.whereIn('u.id', [...ids]).orWhereIn('u.code', [...codes])
      })
      .select('u.id', 'u.code')
    const found = new Set<number>(members.map((member) => Number(member.id)))
    const foundCodes = new Set<string>(members.map((member) => member.code))
    const missing = [
      ...[...ids].filter((id) => !found.has(id)),
      ...[...codes].filter((code) => !foundCodes.has(code)),
    ]
    if (missing.length > 0)
      throw invalid(`participants must be members of the book: ${missing.join(', ')}`)
    return [...found]
  }

  /** Writes (or removes, with null) the event of a message inside its transaction. */
  async save(
    trx: TransactionClientContract,
    stamp: number,
    message: { smid: number; book_id: number; creator_id: number },
    event: EventInput | null
  ) {
    const existing = await trx
      .from(TABLES.events)
      .where('smid', message.smid)
      .select('id', 'del')
      .first()
    const now = nowSeconds()
    if (event === null) {
      if (existing && !existing.del) {
        await trx
          .from(TABLES.events)
          .where('id', existing.id)
          .update({ del: true, sstamp: stamp, last_modified: now })
      }
      return
    }
    const fields = {
      event_start: event.eventStart,
      event_end: event.eventEnd,
      event_timezone: event.eventTimezone,
      all_day: event.eventAllDay,
      is_busy: event.isBusy,
      reminder_data: JSON.stringify(event.reminderData),
      del: false,
      last_modified: now,
      sstamp: stamp,
    }
    let eventId: number
    if (existing) {
      eventId = Number(existing.id)
      await trx.from(TABLES.events).where('id', eventId).update(fields)
      await trx.from(TABLES.participants).where('event_id', eventId).delete()
    } else {
      const [id] = await trx.table(TABLES.events).insert({
        ...fields,
        book_id: message.book_id,
        smid: message.smid,
        creator_id: message.creator_id,
        created: now,
      })
      eventId = Number(id)
    }
    if (event.participantIds.length > 0) {
      await trx
        .table(TABLES.participants)
        .insert(event.participantIds.map((userId) => ({ event_id: eventId, user_id: userId })))
    }
  }

  /** Marks the event of a deleted message deleted. */
  async deleteFor(trx: TransactionClientContract, stamp: number, smid: number) {
    await trx
      .from(TABLES.events)
      .where('smid', smid)
      .where('del', false)
      .update({ del: true, sstamp: stamp, last_modified: nowSeconds() })
  }

  /** The live events of some messages, with participants, keyed by smid. */
  async forMessages(smids: number[]) {
    const result = new Map<number, MessageEventView>()
    for (const group of chunks(smids)) {
      const rows = (await db
        .from(TABLES.events)
        .whereIn('smid', group)
        .where('del', false)) as EventRow[]
      const participants = await this.participantsOf(rows.map((row) => Number(row.id)))
      for (const row of rows) {
        result.set(Number(row.smid), { row, participants: participants.get(Number(row.id)) ?? [] })
      }
    }
    return result
  }

  private async participantsOf(eventIds: number[]) {
    const result = new Map<number, { id: number; u_c: string }[]>()
    if (eventIds.length === 0) return result
    const rows = await db
      .from(`${TABLES.participants} as p`)
      .join('users as u', 'u.id', 'p.user_id')
      .whereIn('p.event_id', eventIds)
      .orderBy('p.user_id')
      .select('p.event_id', 'u.id', 'u.code')
    for (const row of rows) {
      const participants = result.get(Number(row.event_id)) ?? []
      participants.push({ id: Number(row.id), u_c: row.code })
      result.set(Number(row.event_id), participants)
    }
    return result
  }

  /** getBookEvents: the book `b_o`/`b_c` names, readable by the actor, and its events (see list). */
  async listFor(actor: Actor, b_o: string, b_c: string, filter: EventFilter) {
    const book = await this.access.resolveFor(actor, b_o, b_c, 'read')
    return { book, events: await this.list(book, filter) }
  }

  /**
   * Events overlapping [dateMin, dateMax] (whole UTC days), optionally only
   * some ids or those of some participants; by start time.
   */
  async list(book: BookRef, filter: EventFilter) {
    const query = db
      .from(`${TABLES.events} as e`)
      .join(`${TABLES.messages} as m`, 'm.smid', 'e.smid')
      .where('e.book_id', book.id)
      .where('e.del', false)
      .orderBy('e.event_start')
      .orderBy('e.id')
      .select('e.*', 'm.msg', 'm.uuid')
    const dayStart = (name: string, value: string) => {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
        throw rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: expected yyyy-mm-dd`, {
          field: name,
        })
      }
      return Date.parse(`${value}T00:00:00Z`) / 1000
    }
    if (filter.dateMin) query.where('e.event_end', '>=', dayStart('dateMin', filter.dateMin))
    if (filter.dateMax)
      query.where('e.event_start', '<', dayStart('dateMax', filter.dateMax) + 86_400)

    const ids = (filter.eventIds ?? []).map((id) => (isNested(id) ? Number.NaN : Number(id)))
    if (ids.some((id) => !Number.isInteger(id))) {
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter events_ids: expected event ids', {
        field: 'events_ids',
      })
    }
    if (ids.length > 0) query.whereIn('e.id', ids)

    const participants = (filter.participants ?? []).map((item) => {
      const key = isNested(item) ? (item as Record<string, unknown>).id : item
      if (isNested(key)) {
        throw rpcError('INVALID_PARAMETER', 'Invalid parameter participants: user ids or codes', {
          field: 'participants',
        })
      }
      return String(key).trim()
    })
    if (participants.length > 0) {
      const numeric = participants.filter((item) => /^\d+$/.test(item)).map(Number)
      const codes = participants.filter((item) => !/^\d+$/.test(item))
      const byCode = codes.length > 0 ? await this.users.idsOfCodes(codes) : new Map()
      const userIds = [...numeric, ...byCode.values()]
      query.whereExists((sub) => {
        sub
          .from(`${TABLES.participants} as p`)
          .whereRaw('p.event_id = e.id')
          .whereIn('p.user_id', userIds.length > 0 ? userIds : [0])
      })
    }

    const limit = filter.limit ?? 100
    const page = Math.max(1, filter.page ?? 1)
    const rows = await query.limit(limit).offset((page - 1) * limit)
    const [participantsById, creators] = await Promise.all([
      this.participantsOf(rows.map((row) => Number(row.id))),
      this.users.codesOf(rows.map((row) => Number(row.creator_id))),
    ])
    return rows.map((row) =>
      serializeBookEvent(row, {
        u_c: creators.get(Number(row.creator_id)) ?? '',
        b_o: book.b_o,
        b_c: book.b_c,
        msg: row.msg,
        uuid: row.uuid,
        participants: participantsById.get(Number(row.id)) ?? [],
      })
    )
  }
}

/** The `eventParticipants` of an event object, as a list (empty when absent). */
async function participantList(source: Record<string, unknown>): Promise<unknown[]> {
  try {
    const { eventParticipants } = await eventLists.validate({
      eventParticipants: source.eventParticipants,
    })
    return eventParticipants ?? []
  } catch {
    throw invalid('eventParticipants must be a list')
  }
}
