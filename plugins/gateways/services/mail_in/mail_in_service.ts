import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { inject } from '@adonisjs/core'
import logger from '@adonisjs/core/services/logger'
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser'
import type { Actor } from '#core/rpc/base_operation'
import { RpcError } from '#core/rpc/errors'
import { normalizeEmail } from '#core/services/user_service'
import type ApiSession from '#models/api_session'
import { NO_RESTRICTIONS } from '#models/api_session'
import User from '#models/user'
import { MAX_MSG_LENGTH } from '#plugins/books/services/message_writer'
import { MessageService, type SendResult } from '#plugins/books/services/message_service'
import { BookAccessService, type BookRef } from '#plugins/books/services/book_access_service'
import { BookService } from '#plugins/books/services/book_service'
import gatewaysConfig from '../../config.js'
import { bookAddress, bookPairsOf, isAtMailDomain, type BookCodes } from './mail_address.js'
import { MailFiles } from './mail_files.js'
import { sanitizeMailHtml } from './mail_html.js'
import { MailInLimits } from './mail_in_limits.js'
import { MailInLog, type MailLogEntry, type MailOutcome } from './mail_in_log.js'
import { MailRefusal } from './mail_refusal.js'

export interface MailEnvelope {
  source: MailLogEntry['source']
  /**
   * The recipient the relay delivered to (SMTP RCPT TO, the webhook's
   * `recipient`, mail:ingest --to). Absent, the first address of the
   * domain in Delivered-To, To, then Cc.
   */
  recipient?: string
}

export interface MailStored {
  outcome: Exclude<MailOutcome, 'refused'>
  smid: number
  book: BookCodes
}

/** What the log already knows of a mail as it goes through the steps. */
type Seen = Omit<MailLogEntry, 'outcome'>

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')

/** Unknown book, unknown sender and non-member answer alike: a stranger learns no book exists. */
const notFound = (detail: string) =>
  new MailRefusal('MAIL_NOT_FOUND', 'No such book, or the sender may not post to it', detail)

/**
 * E-mail into books (issue 19 item 5; README "E-mail in"). The SMTP
 * listener, the relay webhook and `node ace mail:ingest` hand the raw
 * message to ingest(); it stores it as a message of the book its recipient
 * names, written as the member its From address belongs to, with its files,
 * or refuses it (MailRefusal) having stored nothing. Every mail is logged.
 */
@inject()
export class MailInService {
  constructor(
    private messages: MessageService,
    private access: BookAccessService,
    private books: BookService,
    private files: MailFiles,
    private limits: MailInLimits,
    private journal: MailInLog
  ) {}

  /** The book's address (`<b_c>.<b_o>@MAIL_DOMAIN`), or null: see mail_address.ts. */
  bookAddress(book: BookCodes): string | null {
    return bookAddress(book)
  }

  /** A page of the inbound mail log, newest first (the console). */
  log(request: { offset: number; limit: number; outcome?: MailOutcome }) {
    return this.journal.page(request)
  }

  /**
   * Reads a raw message (at most GATEWAYS_MAIL_MAX_BYTES; a longer one is
   * read to its end and refused) and stores it, once per Message-ID and
   * book. Throws MailRefusal when it is not stored.
   */
  async ingest(input: Readable, envelope: MailEnvelope): Promise<MailStored> {
    const seen: Seen = {
      source: envelope.source,
      sender: null,
      recipient: envelope.recipient?.trim() || null,
      messageId: null,
      subject: null,
      size: 0,
    }
    try {
      return await this.store(input, seen)
    } catch (error) {
      if (error instanceof MailRefusal) {
        await this.journal.add({
          ...seen,
          outcome: 'refused',
          code: error.code,
          reason: error.detail,
        })
      }
      throw error
    }
  }

  private async store(input: Readable, seen: Seen) {
    const raw = await readLimited(input, seen)
    const mail = await parse(raw)
    const from = mail.from?.value.find((address) => address.address)?.address
    if (!from) throw new MailRefusal('MAIL_UNPARSABLE', 'The message has no From address')
    seen.sender = normalizeEmail(from)
    seen.messageId = mail.messageId?.trim() || null
    seen.subject = mail.subject?.trim() || null
    seen.recipient ??= recipientOf(mail)
    if (isAutomatic(mail)) {
      throw new MailRefusal('MAIL_AUTOMATIC', 'Automatic mail (auto-replies, bulk) is not stored')
    }
    if (!seen.recipient) {
      throw new MailRefusal(
        'MAIL_UNKNOWN_RECIPIENT',
        `No recipient at ${gatewaysConfig.mailIn.domain ?? '(MAIL_DOMAIN unset)'}`
      )
    }
    await this.limits.sender(seen.sender)
    const book = await this.bookOf(seen.recipient)
    seen.bookId = book.id
    const actor = await this.senderIn(book, seen.sender)

    // The Message-ID names the mail; without one, its bytes do.
    const dedupeKey = sha256(`${book.id}\n${seen.messageId ?? `sha256:${sha256(raw)}`}`)
    const first = await this.journal.storedSmid(dedupeKey)
    if (first !== null) return this.duplicate(seen, book, first)

    const html = mail.html ? sanitizeMailHtml(mail.html) : ''
    const text = (mail.text ?? '').trim()
    const attachments = mail.attachments.filter((attachment) => attachment.content.length > 0)
    if (!seen.subject && !text && !html && attachments.length === 0) {
      throw new MailRefusal('MAIL_UNPARSABLE', 'The message is empty')
    }
    const files = await this.files.store(attachments, html)
    let lastImage: number | null = null
    let sent: SendResult
    try {
      sent = await this.messages.sendWithin(
        actor,
        {
          b_o: book.b_o,
          b_c: book.b_c,
          msg: (seen.subject ?? text).slice(0, MAX_MSG_LENGTH),
          body: text,
          bodyHtml: html || undefined,
          msgMethod: '_mail',
          nbMedias: files.length,
        },
        async (trx, row) => {
          const recorded = await this.files.record(
            files,
            actor.user.id,
            { bookId: book.id, smid: Number(row.smid) },
            trx
          )
          lastImage = recorded.lastImage
          await this.journal.add(
            { ...seen, outcome: 'stored', smid: Number(row.smid), dedupeKey },
            trx
          )
          return recorded.columns
        }
      )
    } catch (error) {
      await this.files.discard(files)
      // The same mail stored meanwhile by another delivery (the log's unique key refused this one).
      const winner = await this.journal.storedSmid(dedupeKey)
      if (winner !== null) return this.duplicate(seen, book, winner)
      throw refusalOf(error)
    }
    await this.markLastImage(book, lastImage)
    return { outcome: 'stored' as const, smid: sent.smid, book: codesOf(book) }
  }

  private async duplicate(seen: Seen, book: BookRef, smid: number): Promise<MailStored> {
    await this.journal.add({ ...seen, outcome: 'duplicate', smid })
    return { outcome: 'duplicate', smid, book: codesOf(book) }
  }

  /** The one live book the address names (see bookPairsOf). */
  private async bookOf(recipient: string): Promise<BookRef> {
    if (!isAtMailDomain(recipient)) {
      throw new MailRefusal(
        'MAIL_UNKNOWN_RECIPIENT',
        `${recipient} is not an address of ${gatewaysConfig.mailIn.domain ?? '(MAIL_DOMAIN unset)'}`
      )
    }
    const found = new Map<number, BookRef>()
    for (const pair of bookPairsOf(recipient)) {
      const book = await this.access.resolve(pair.b_o, pair.b_c)
      if (book) found.set(book.id, book)
    }
    if (found.size > 1) {
      throw new MailRefusal(
        'MAIL_AMBIGUOUS_ADDRESS',
        `${recipient} names more than one book: the owner must rename one of them`
      )
    }
    const [book] = found.values()
    if (!book) throw notFound(`no book has the address ${recipient}`)
    return book
  }

  /** The sender as the author of the message: a live account with this e-mail, a member who may write. */
  private async senderIn(book: BookRef, address: string): Promise<Actor> {
    const user = await User.findBy('email', address)
    if (!user || user.disabledAt) throw notFound(`no active account has the e-mail ${address}`)
    const actor: Actor = {
      user,
      principal: user,
      // Mail holds no session: nothing of a session is read for it.
      session: null as unknown as ApiSession,
      restrictions: { ...NO_RESTRICTIONS },
      onBehalf: false,
    }
    try {
      await this.access.resolveFor(actor, book.b_o, book.b_c, 'write')
    } catch (error) {
      throw refusalOf(error, `${address} is not a member of ${book.b_c} (${book.b_o})`)
    }
    return actor
  }

  /** The book's cover follows its last image, as after a fileUpload (not part of the message's write). */
  private async markLastImage(book: BookRef, image: number | null) {
    if (image === null) return
    await this.books.setLastMedia(book.id, image).catch((error) => {
      logger.warn({ err: error, bookId: book.id }, 'inbound mail: the book lastMedia was not set')
    })
  }
}

/** The raw message, counting its size; past the limit it is read to its end, then refused. */
async function readLimited(input: Readable, seen: Seen): Promise<Buffer> {
  const max = gatewaysConfig.mailIn.maxBytes
  const chunks: Buffer[] = []
  for await (const chunk of input) {
    seen.size += chunk.length
    if (seen.size <= max) chunks.push(chunk)
  }
  if (seen.size > max) {
    throw new MailRefusal('MAIL_TOO_LARGE', `The message exceeds ${max} bytes`)
  }
  return Buffer.concat(chunks)
}

/** mailparser reads nearly anything; a message without a single header is not mail. */
async function parse(raw: Buffer): Promise<ParsedMail> {
  if (raw.length === 0) throw new MailRefusal('MAIL_UNPARSABLE', 'The message is empty')
  try {
    // cid: links stay as written (by default mailparser inlines the images as data: URLs).
    const mail = await simpleParser(raw, { keepCidLinks: true })
    if (mail.headers.size === 0) throw new Error('no header')
    return mail
  } catch (error) {
    throw new MailRefusal(
      'MAIL_UNPARSABLE',
      'The message is not a readable e-mail (RFC 5322)',
      `unparsable: ${(error as Error).message}`
    )
  }
}

/**
 * An auto-reply or bulk mail (RFC 3834 Auto-Submitted, Precedence, the
 * X-Autoreply family): a book's copies carry its address as Reply-To, and a
 * vacation responder answering them must not become a message that sends
 * copies again.
 */
function isAutomatic(mail: ParsedMail) {
  const header = (name: string) =>
    String(mail.headers.get(name) ?? '')
      .trim()
      .toLowerCase()
  const submitted = header('auto-submitted')
  if (submitted !== '' && submitted !== 'no') return true
  if (['bulk', 'junk', 'auto_reply'].includes(header('precedence'))) return true
  return header('x-autoreply') !== '' || header('x-autorespond') !== ''
}

/** The first address of the book domain among Delivered-To, To and Cc. */
function recipientOf(mail: ParsedMail): string | null {
  const delivered = mail.headers.get('delivered-to')
  const candidates = [
    ...(typeof delivered === 'string' ? [delivered] : []),
    ...addresses(mail.to),
    ...addresses(mail.cc),
  ]
  return (
    candidates.map((address) => address.trim()).find((address) => isAtMailDomain(address)) ?? null
  )
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  if (!field) return []
  return (Array.isArray(field) ? field : [field]).flatMap((object) =>
    object.value.flatMap((address) => (address.address ? [address.address] : []))
  )
}

const codesOf = (book: BookRef): BookCodes => ({ b_o: book.b_o, b_c: book.b_c })

/** The books plugin's refusal of a mail, as a MailRefusal; anything else is a fault, rethrown. */
function refusalOf(error: unknown, notMember?: string): unknown {
  if (!(error instanceof RpcError)) return error
  switch (error.code) {
    case 'NOT_FOUND':
      return notFound(notMember ?? error.message)
    case 'FORBIDDEN':
      return new MailRefusal('MAIL_FORBIDDEN', error.message)
    case 'INVALID_PARAMETER':
      // Only lengths can be wrong in what ingest sends: the text or bodies past the books' limits.
      return new MailRefusal('MAIL_TOO_LARGE', error.message)
    default:
      return error
  }
}
