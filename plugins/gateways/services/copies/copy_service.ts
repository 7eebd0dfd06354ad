import { inject } from '@adonisjs/core'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { OutboxContributor, OutboxEntry } from '#core/outbox/types'
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
    const members = await client
      .from('book_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.book_id', event.bookId)
      .where('m.invite', 'accepted')
      .where('m.del', false)
      .whereNull('u.disabled_at')
      .whereNotIn('m.user_id', senderIdsOf(event))
      // Both prefs default to false: a member who never set one is not read at all.
      .where('m.user_prefs', 'like', '%Copy%')
      .select('m.user_id', 'm.user_prefs', 'u.email', 'u.phone')
    if (members.length === 0) return []
    const book = await client
      .from('books')
      .where('id', event.bookId)
      .select('owner_prefs', 'archived')
      .first()
    if (!book) return []
    const archived = Boolean(Number(book.archived))
    const title = String(
      typedPrefs(OWNER_PREF_KINDS, OWNER_PREF_DEFAULTS, parseJson(book.owner_prefs, null)).title ||
        event.b_c
    )
    const creator = await client
      .from('users')
      .where('id', event.row.creator_id)
      .select('code', 'first_name', 'last_name')
      .first()
    const sender = creator ? displayName(creator) : ''
    const smid = Number(event.row.smid)
    const text = event.row.msg ?? ''
    const replyTo = bookAddress({ b_o: event.b_o, b_c: event.b_c })
    const entries: OutboxEntry[] = []
    for (const member of members) {
      const prefs = typedPrefs(
        USER_PREF_KINDS,
        USER_PREF_DEFAULTS,
        parseJson(member.user_prefs, null)
      )
      if (archived && prefs.notifyWhenMsgInArchivedBook !== true) continue
      const userId = Number(member.user_id)
      if (prefs.notifyEmailCopy === true && member.email && this.mailOut.enabled) {
        entries.push(
          this.mailOut.entry({
            to: String(member.email),
            subject: `[${title}] ${cut(firstLine(text) || '(no text)', SUBJECT_LENGTH)}`,
            text: mailText({ sender, title, text, body: event.row.msg_body, replyTo }),
            ...(replyTo ? { replyTo } : {}),
            headers: {
              // RFC 3834: out-of-office robots do not answer it (their answer would land in the book).
              'Auto-Submitted': 'auto-generated',
              'X-Quire-Book': `${event.b_o}/${event.b_c}`,
              'X-Quire-Message': String(smid),
            },
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
