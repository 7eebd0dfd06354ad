import type { BookRow, MemberRow, MessageRow } from '../models/records.js'
import {
  OWNER_PREF_DEFAULTS,
  OWNER_PREF_KINDS,
  USER_PREF_DEFAULTS,
  USER_PREF_KINDS,
  parseJson,
  typedPrefs,
} from '../models/prefs.js'
import { serializeLastMessage } from './message_serializer.js'

const int = (value: unknown) => Math.trunc(Number(value ?? 0)) || 0

export interface MemberView {
  u_c: string
  invite: string
  right: number
}

/** Everything the book serializer needs, gathered by BookService in a few set-wise queries. */
export interface BookView {
  book: BookRow
  ownerCode: string
  /** The viewing user's code. */
  viewerCode: string
  /** The viewing user's membership. */
  member: MemberRow
  members: MemberView[]
  lastMsg: { row: MessageRow; u_c: string } | null
  nbMsgs: number
  nbNotRead: number
  /** Highest stamp among the book, the viewer's membership and the book's messages. */
  sstamp: number
  /** The book was deleted, or the viewer left or lost it: answered with del true in a delta. */
  gone: boolean
  /** Whether the viewer may see messages (accepted, and the session does not hide them). */
  showMessages: boolean
}

/** A member (2.4), with the fields real clients read: access (int) and apiRight ("0"/"1", a string). */
export function serializeMember(member: MemberView) {
  const accepted = member.invite === 'accepted'
  return {
    u_c: member.u_c,
    invite: member.invite,
    right: int(member.right),
    access: accepted ? int(member.right) : 0,
    apiRight: accepted ? '1' : '0',
  }
}

/** fpForm: `sfpid` in the spec, `fpid` in the live product; both are answered. */
export function serializeFpForm(raw: string | null) {
  const form = parseJson<{ id?: number; name?: string; lastModified?: number }>(raw, {})
  const id = int(form.id)
  return {
    sfpid: id,
    fpid: id,
    name: String(form.name ?? ''),
    lastModified: int(form.lastModified),
  }
}

/**
 * Most books and members share a few prefs documents ('{}' above all): a
 * listing of hundreds of books parses each distinct document once. The
 * results are frozen, since they are shared.
 */
function memoized<T>(build: (raw: string | null) => T) {
  const cache = new Map<string | null, T>()
  return (raw: string | null): T => {
    let value = cache.get(raw)
    if (value === undefined) {
      value = Object.freeze(build(raw)) as T
      if (cache.size >= 1000) cache.clear()
      cache.set(raw, value)
    }
    return value
  }
}

export const serializeOwnerPrefs = memoized((raw) =>
  typedPrefs(OWNER_PREF_KINDS, OWNER_PREF_DEFAULTS, parseJson(raw, {}))
)

/** A member's userPrefs of a book; syncWithHubic mirrors syncWithStorage (the live product's name). */
export const serializeBookUserPrefs = memoized((raw) => {
  const prefs = typedPrefs(USER_PREF_KINDS, USER_PREF_DEFAULTS, parseJson(raw, {}))
  return { ...prefs, syncWithHubic: prefs.syncWithStorage }
})

/**
 * A book as getAllBooks and getBookInfo answer it: docs/spec/service-interface.md
 * 2.4 and docs/spec/client-facts.md "Users and books".
 */
export function serializeBook(view: BookView) {
  const { book, member } = view
  const gone = view.gone
  const accepted = member.invite === 'accepted' && !gone
  const members = gone ? [] : view.members
  return {
    sbid: int(book.id),
    b_o: view.ownerCode,
    b_c: book.code,
    accepted,
    invited: member.invite === 'sent' && !gone,
    archived: Boolean(book.archived),
    del: gone,
    sstamp: int(view.sstamp),
    description: book.description ?? '',
    contact_u_c: contactOf(view),
    right: accepted ? int(member.right) : 0,
    nbNotRead: gone || !view.showMessages ? 0 : int(view.nbNotRead),
    nbMembers: members.filter((other) => other.invite === 'accepted').length,
    members: members.map(serializeMember),
    fpForm: serializeFpForm(book.fp_form),
    lastMsg:
      !gone && view.showMessages && view.lastMsg
        ? serializeLastMessage(view.lastMsg.row, {
            u_c: view.lastMsg.u_c,
            b_o: view.ownerCode,
            b_c: book.code,
          })
        : null,
    userPrefs: serializeBookUserPrefs(member.user_prefs),
    ownerPrefs: serializeOwnerPrefs(book.owner_prefs),
    lastMsgRead: int(member.last_msg_read),
    lastMedia: int(book.last_media),
    favorite: Boolean(member.favorite),
    order: int(member.sort_order),
    nbMsgs: gone || !view.showMessages ? 0 : int(view.nbMsgs),
  }
}

/**
 * contact_u_c: in a two-person book, the other person (clients show a
 * conversation with them); null otherwise.
 */
function contactOf(view: BookView): string | null {
  if (view.gone || view.members.length !== 2) return null
  return view.members.find((member) => member.u_c !== view.viewerCode)?.u_c ?? null
}

export interface ContactView {
  u_c: string
  firstName: string
  lastName: string
  sstamp: number
  isConfirmed: boolean
}

/** A contact of allBooks.contacts (2.4). */
export function serializeContact(contact: ContactView) {
  return {
    u_c: contact.u_c,
    lastName: contact.lastName ?? '',
    firstName: contact.firstName ?? '',
    sstamp: int(contact.sstamp),
    isConfirmed: Boolean(contact.isConfirmed),
  }
}
