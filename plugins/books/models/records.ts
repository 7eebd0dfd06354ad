/**
 * Records of the books plugin's tables (one interface per table), as the
 * query builder returns them. Hot reads (message pages, getAllBooks) use the
 * query builder directly: no ORM hydration per row. Booleans come back as 0/1
 * from MySQL and are converted by the serializers.
 */

export const TABLES = {
  books: 'books',
  members: 'book_members',
  contacts: 'book_contacts',
  messages: 'book_messages',
  events: 'book_events',
  participants: 'book_event_participants',
} as const

export type DbBool = boolean | number

export interface BookRow {
  id: number
  owner_id: number
  code: string
  description: string
  owner_prefs: string | null
  fp_form: string | null
  archived: DbBool
  del: DbBool
  last_media: number
  nb_msgs: number
  counted_until: number
  sstamp: number
}

export type MemberInvite = 'sent' | 'accepted'

export interface MemberRow {
  id: number
  book_id: number
  user_id: number
  invite: MemberInvite
  right: number
  invited_by: number | null
  user_prefs: string | null
  favorite: DbBool
  sort_order: number
  last_msg_read: number
  nb_not_read: number
  last_open_at: number | null
  del: DbBool
  sstamp: number
}

export interface MessageRow {
  smid: number
  book_id: number
  uuid: string
  creator_id: number
  pid: number
  msg: string
  msg_body: string | null
  msg_body_html: string | null
  msg_type: string
  msg_method: string
  msg_color: string
  nb_comments: number
  last_comment_id: number
  nb_medias: number
  nb_email_cids: number
  nb_docs: number
  medias: string | null
  has_event: DbBool
  del: DbBool
  created: number
  last_modified: number
  cstamp: number
  sstamp: number
}

export interface EventRow {
  id: number
  book_id: number
  smid: number
  creator_id: number
  event_start: number
  event_end: number
  event_timezone: string
  all_day: DbBool
  is_busy: DbBool
  reminder_data: string | null
  del: DbBool
  created: number
  last_modified: number
  sstamp: number
}

/** A media of a message (2.5), as the media plugin stores it in book_messages.medias. */
export interface MediaEntry {
  id: number
  ext: string
  originName: string
  internName: string
  uuid: string
  size: number
  type: 'media' | 'doc'
  emailCid: string
  del: boolean
}

/** The event of a message (2.9), normalized. */
export interface EventInput {
  eventStart: number
  eventEnd: number
  eventTimezone: string
  eventAllDay: boolean
  isBusy: boolean
  participantIds: number[]
  reminderData: ReminderData
}

export interface ReminderData {
  email: boolean
  sms: boolean
  alarmMobile: boolean
  alarm: boolean
  time: number
  remindermember: number
}

export const nowSeconds = () => Math.floor(Date.now() / 1000)
