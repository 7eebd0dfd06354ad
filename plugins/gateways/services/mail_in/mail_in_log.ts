import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { dbTimestamp } from '#core/db_time'

const TABLE = 'gateways_mail_in_log'

export type MailOutcome = 'stored' | 'duplicate' | 'refused'

/** What a log row says of one inbound mail. */
export interface MailLogEntry {
  source: 'smtp' | 'http' | 'cli'
  sender: string | null
  recipient: string | null
  messageId: string | null
  subject: string | null
  size: number
  outcome: MailOutcome
  code?: string | null
  reason?: string | null
  bookId?: number | null
  smid?: number | null
  dedupeKey?: string | null
}

/** A row of the log as the console reads it. */
export interface MailLogRow {
  id: number
  receivedAt: string
  source: string
  sender: string | null
  recipient: string | null
  messageId: string | null
  subject: string | null
  size: number
  outcome: MailOutcome
  code: string | null
  reason: string | null
  bookId: number | null
  smid: number | null
}

const cut = (text: string | null | undefined, length: number) =>
  text === null || text === undefined ? null : text.slice(0, length)

/** The gateways_mail_in_log table: every query of it lives here. */
export class MailInLog {
  /** Writes one row (with `client`: in the stored message's transaction). */
  async add(entry: MailLogEntry, client: QueryClientContract = db.connection()) {
    await client.table(TABLE).insert({
      received_at: dbTimestamp(),
      source: entry.source,
      sender: cut(entry.sender, 320),
      recipient: cut(entry.recipient, 320),
      message_id: cut(entry.messageId, 998),
      subject: cut(entry.subject, 255),
      size: entry.size,
      outcome: entry.outcome,
      code: entry.code ?? null,
      reason: cut(entry.reason, 500),
      book_id: entry.bookId ?? null,
      smid: entry.smid ?? null,
      dedupe_key: entry.dedupeKey ?? null,
    })
  }

  /** The message already stored under this key, if any. */
  async storedSmid(dedupeKey: string): Promise<number | null> {
    const row = await db.from(TABLE).where('dedupe_key', dedupeKey).select('smid').first()
    return row ? Number(row.smid) : null
  }

  /** A page of the log, newest first; `total` counts every row of that outcome (or all). */
  async page(request: { offset: number; limit: number; outcome?: MailOutcome }) {
    const filtered = () => {
      const query = db.from(TABLE)
      if (request.outcome) query.where('outcome', request.outcome)
      return query
    }
    const [rows, [count]] = await Promise.all([
      filtered().orderBy('id', 'desc').offset(request.offset).limit(request.limit),
      filtered().count('* as total'),
    ])
    return {
      total: Number(count.total),
      rows: rows.map((row): MailLogRow => ({
        id: Number(row.id),
        receivedAt: new Date(row.received_at).toISOString(),
        source: row.source,
        sender: row.sender,
        recipient: row.recipient,
        messageId: row.message_id,
        subject: row.subject,
        size: Number(row.size),
        outcome: row.outcome,
        code: row.code,
        reason: row.reason,
        bookId: row.book_id === null ? null : Number(row.book_id),
        smid: row.smid === null ? null : Number(row.smid),
      })),
    }
  }
}
