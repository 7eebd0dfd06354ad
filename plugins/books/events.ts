import type { BookRef } from './services/book_access_service.js'
import type { MessageRow } from './models/records.js'

/**
 * Events of the books plugin, emitted after the write commits (never on
 * rollback). Payloads carry wire-ready data so that the realtime channel can
 * forward them without reading the database again.
 */
export interface BookMessageCreated {
  book: BookRef
  /** The message as getBookMessages answers it. */
  message: Record<string, unknown> & {
    smid: number
    uuid: string
    u_c: string
    created: number
    sstamp: number
  }
  creatorId: number
  /** The user who made the call (differs from the creator when acting on behalf). */
  actorId: number
  /** Set when the message is a copy (copyOrMoveMessage): the media plugin duplicates files. */
  copiedFrom?: { bookId: number; smid: number }
}

export interface BookMessageUpdated extends BookMessageCreated {}

export interface BookMessageDeleted {
  book: BookRef
  smid: number
  uuid: string
  sstamp: number
  creatorId: number
  actorId: number
  /** The message as getBookMessages answers a deleted one (del true, content emptied). */
  message: BookMessageCreated['message']
  /** Set when the message was moved to another book (copyOrMoveMessage). */
  movedTo?: { bookId: number; smid: number }
}

export interface BookUpdated {
  book: BookRef
  /** What changed: 'created', 'title', 'description', 'ownerPrefs', 'archived', 'unarchived', 'fpForm', 'lastMedia'. */
  changes: string[]
  actorId: number | null
}

export type MemberChange =
  'invited' | 'accepted' | 'declined' | 'removed' | 'left' | 'right' | 'prefs' | 'owner'

export interface BookMemberChanged {
  book: BookRef
  userId: number
  u_c: string
  change: MemberChange
  invite: 'sent' | 'accepted'
  right: number
  /** True when the user no longer belongs to the book (declined, removed, left). */
  del: boolean
  actorId: number
}

declare module '@adonisjs/core/types' {
  interface EventsList {
    'books:message_created': BookMessageCreated
    'books:message_updated': BookMessageUpdated
    'books:message_deleted': BookMessageDeleted
    'books:book_updated': BookUpdated
    'books:member_changed': BookMemberChanged
  }
}

/**
 * A message write as staged INSIDE its transaction (kernel outbox topic,
 * docs/outbox.md): webhooks' `message.created|updated|deleted`. Staged only
 * when a contributor wants it (`wants({bookId})` is asked first, so a book
 * nobody subscribes to stays on the writer's fast path).
 */
export interface MessageChanging {
  kind: 'created' | 'updated' | 'deleted'
  bookId: number
  b_o: string
  b_c: string
  /** The message's row after the write (deleted: as it was, del set). */
  row: MessageRow
  /** The user the write acts as, and the sesskey's holder when acting on behalf. */
  actorId: number
  onBehalfOf: number | null
  stamp: number
}

declare module '#core/outbox/types' {
  interface OutboxTopics {
    'books:message_changed': MessageChanging
  }
}

/**
 * An invitation as staged INSIDE its transaction (kernel outbox topic,
 * docs/outbox.md): the gateways plugin's push to the invitee's devices.
 * Staged only when a contributor wants it (`wants({bookId})` first).
 */
export interface MemberInviting {
  bookId: number
  b_o: string
  b_c: string
  /** The invited user. */
  userId: number
  right: number
  /** Who invited (the user acted as), and the sesskey's holder when acting on behalf. */
  actorId: number
  onBehalfOf: number | null
  stamp: number
}

declare module '#core/outbox/types' {
  interface OutboxTopics {
    'books:member_invited': MemberInviting
  }
}

/**
 * An invitation to an e-mail address or phone number with no account, as
 * staged INSIDE its transaction (kernel outbox topic, docs/outbox.md): the
 * gateways plugin's e-mail or SMS carrying the link `/invite/<token>`. The
 * token is in this event only (the table keeps its hash): contributors put
 * it in the link and nowhere else.
 */
export interface AddressInviting {
  bookId: number
  b_o: string
  b_c: string
  kind: 'email' | 'phone'
  /** Lower-cased e-mail, or the phone as users.phone stores it (digits and a leading +). */
  address: string
  /** The invitation row: with the token it makes one delivery per invitation sent. */
  invitationId: number
  token: string
  /** The user acted as (the inviter). */
  actorId: number
  /** Epoch ms. */
  expiresAt: number
  stamp: number
}

declare module '#core/outbox/types' {
  interface OutboxTopics {
    'books:address_invited': AddressInviting
  }
}
