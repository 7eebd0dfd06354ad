import { inject } from '@adonisjs/core'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { OutboxContributor, OutboxEntry } from '#core/outbox/types'
import { readQuery } from '#core/native_sql'
import type { MessageChanging } from '#plugins/books/events'
import {
  OWNER_PREF_DEFAULTS,
  OWNER_PREF_KINDS,
  USER_PREF_DEFAULTS,
  USER_PREF_KINDS,
  parseJson,
  typedPrefs,
} from '#plugins/books/models/prefs'
import { bookAddress } from '../mail_in/mail_address.js'
import { MailOutService } from '../mail_out/mail_out_service.js'
import { SmsOutboxService } from '../sms_outbox_service.js'
import { displayName, senderIdsOf, smsNumber } from './recipients.js'

/** A member who may want a copy, with its book userPrefs parsed once per transaction. */
type MemberRow = Record<string, any> & { prefs: Record<string, unknown> }

const SUBJECT_LENGTH = 80
const SMS_LENGTH = 300

const cut = (text: string, length: number) =>
  text.length > length ? `${text.slice(0, length - 1)}…` : text

/**
 * Copies of new messages (issue 19 item 6): each accepted member whose book
 * userPrefs ask for it gets every new message of the book by e-mail
 * (notifyEmailCopy, through the outbox's `mail` channel) or SMS
 * (notifySmsCopy, through the SMS gateways' queue), never the sender, and in
 * an archived book only with notifyWhenMsgInArchivedBook. Written in the
 * message's own transaction (books' in-transaction topic
 * `books:message_changed`), sent after commit.
 */
@inject()
export class CopyService {
  constructor(
    private mailOut: MailOutService,
    private sms: SmsOutboxService
  ) {}

  /** The contribution to books' in-transaction topic. */
  messageContributor(): OutboxContributor<MessageChanging> {
    return {
      // Asked with {bookId} alone first: a kind not yet known may be 'created'.
      wants: (event) => event.kind === undefined || event.kind === 'created',
      mayStage: async (event) => {
        if (event.bookId === undefined) return true
        const readers = await this.readersOf(event.bookId, null, 1)
        return readers.length > 0
      },
      entries: (event, client, afterCommit) => this.copiesOf(event, client, afterCommit),
    }
  }

  /**
   * Inside the message's transaction: the mail entries it answers (written
   * by the outbox with the message) and the SMS it queues itself.
   */
  async copiesOf(
    event: MessageChanging,
    client: QueryClientContract,
    afterCommit: (callback: () => unknown) => void
  ): Promise<OutboxEntry[]> {
    if (event.kind !== 'created' || event.row.del) return []
    const senders = new Set(senderIdsOf(event))
    const readers = await this.copyReaders(event.bookId, client)
    const members = readers.filter((member) => !senders.has(Number(member.user_id)))
    if (members.length === 0) return []
    const book = await this.bookAndCreator(event.bookId, Number(event.row.creator_id), client)
    if (!book) return []
    const archived = Boolean(Number(book.archived))
    const title = String(
      typedPrefs(OWNER_PREF_KINDS, OWNER_PREF_DEFAULTS, parseJson(book.owner_prefs, null)).title ||
        event.b_c
    )
    const creator =
      book.code === null
        ? null
        : (book as { code: string; first_name?: string; last_name?: string })
    const sender = creator ? displayName(creator) : ''
    const smid = Number(event.row.smid)
    const text = event.row.msg ?? ''
    const replyTo = bookAddress({ b_o: event.b_o, b_c: event.b_c })
    const entries: OutboxEntry[] = []
    // The same mail for every member but its address: made once.
    let mail: { subject: string; text: string; headers: Record<string, string> } | null = null
    for (const member of members) {
      const prefs = member.prefs
      if (archived && prefs.notifyWhenMsgInArchivedBook !== true) continue
      const userId = Number(member.user_id)
      if (prefs.notifyEmailCopy === true && member.email && this.mailOut.enabled) {
        mail ??= {
          subject: `[${title}] ${cut(firstLine(text) || '(no text)', SUBJECT_LENGTH)}`,
          text: mailText({ sender, title, text, body: event.row.msg_body, replyTo }),
          headers: {
            // RFC 3834: out-of-office robots do not answer it (their answer would land in the book).
            'Auto-Submitted': 'auto-generated',
            'X-Quire-Book': `${event.b_o}/${event.b_c}`,
            'X-Quire-Message': String(smid),
          },
        }
        entries.push(
          this.mailOut.entry({
            to: String(member.email),
            ...mail,
            ...(replyTo ? { replyTo } : {}),
            idempotencyKey: `copy:${smid}:user:${userId}`,
            eventType: 'message.copy',
          })
        )
      }
      const phone = prefs.notifySmsCopy === true ? smsNumber(member.phone) : null
      if (phone) {
        await this.sms.enqueue(
          client,
          {
            to: phone,
            text: cut(`${title}: ${sender}: ${text}`, SMS_LENGTH),
            bookId: event.bookId,
            kind: 'copy',
            idempotencyKey: `copy:${smid}:user:${userId}`,
          },
          afterCommit
        )
      }
    }
    return entries
  }

  /**
   * The book's accepted, enabled members who may want a copy, read once per transaction and
   * book: sends arriving together share one transaction (books' group commit), and this read,
   * paid by every sendMsg whether or not anyone wants a copy, was a round trip per message
   * inside it (on MariaDB the batch's transaction is the sends' bottleneck). A plain statement
   * (readQuery) for the same reason. The transaction's own view: nothing it writes changes them.
   */
  private copyReaders(bookId: number, client: QueryClientContract): Promise<MemberRow[]> {
    let byBook = this.readersByTransaction.get(client)
    if (!byBook) this.readersByTransaction.set(client, (byBook = new Map()))
    let readers = byBook.get(bookId)
    if (!readers) {
      readers = this.readersOf(bookId, client)
      byBook.set(bookId, readers)
    }
    return readers
  }

  /**
   * The book's accepted, enabled members who may want a copy (in `client`'s transaction, or on
   * committed data when null), at most `limit`.
   */
  private async readersOf(
    bookId: number,
    client: QueryClientContract | null,
    limit?: number
  ): Promise<MemberRow[]> {
    const rows = await readQuery(
      `SELECT m.user_id, m.user_prefs, u.email, u.phone FROM book_members m` +
        ` JOIN users u ON u.id = m.user_id` +
        ` WHERE m.book_id = ? AND m.invite = 'accepted' AND m.del = ? AND u.disabled_at IS NULL` +
        // Both prefs default to false: a member who never set one is not read at all.
        ` AND m.user_prefs LIKE '%Copy%'` +
        (limit ? ` LIMIT ${limit}` : ''),
      [bookId, false],
      client ?? undefined
    )
    return rows.map((row) => ({
      ...row,
      prefs: typedPrefs(USER_PREF_KINDS, USER_PREF_DEFAULTS, parseJson(row.user_prefs, null)),
    }))
  }

  /** The book's prefs and the message's creator, read once per transaction, book and creator. */
  private bookAndCreator(bookId: number, creatorId: number, client: QueryClientContract) {
    let byKey = this.booksByTransaction.get(client)
    if (!byKey) this.booksByTransaction.set(client, (byKey = new Map()))
    const key = `${bookId}:${creatorId}`
    let book = byKey.get(key)
    if (!book) {
      book = readQuery(
        'SELECT b.owner_prefs, b.archived, u.code, u.first_name, u.last_name FROM books b' +
          ' LEFT JOIN users u ON u.id = ? WHERE b.id = ?',
        [creatorId, bookId],
        client
      ).then(([row]) => row)
      byKey.set(key, book)
    }
    return book
  }

  private readersByTransaction = new WeakMap<
    QueryClientContract,
    Map<number, Promise<MemberRow[]>>
  >()
  private booksByTransaction = new WeakMap<
    QueryClientContract,
    Map<string, Promise<Record<string, any> | undefined>>
  >()
}

const firstLine = (text: string) => text.split(/\r?\n/, 1)[0].trim()

/** The copy's text: who wrote where, the message, its body, and where replies go. */
function mailText(parts: {
  sender: string
  title: string
  text: string
  body: string | null
  replyTo: string | null
}) {
  const lines = [`${parts.sender} in ${parts.title}:`, '', parts.text]
  if (parts.body) lines.push('', parts.body)
  lines.push(
    '',
    '-- ',
    parts.replyTo
      ? `A copy of a message of the book ${parts.title}. Reply to this e-mail to answer in the book.`
      : `A copy of a message of the book ${parts.title}.`
  )
  return lines.join('\n')
}
