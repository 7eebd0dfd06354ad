import db from '@adonisjs/lucid/services/db'
import { inject } from '@adonisjs/core'
import { QueueService } from '#core/services/queue_service'

/** Stamps are wall-clock milliseconds x 10 (app/core/services/stamp_allocator.ts): one hour of them. */
const STAMPS_PER_HOUR = 3_600_000 * 10
const HOURS = 24

export interface HourlySeries {
  /** Start of each hour, ms since the epoch, oldest first (24 buckets). */
  hours: number[]
  counts: number[]
}

const has = async (table: string) => db.connection().schema.hasTable(table)

/**
 * What the dashboard shows, each figure from one SQL aggregate: counts of
 * users, books, messages, table rows and open sessions; the job queue's
 * states; recent activity; messages and row writes per hour over the last
 * day (grouped on the stamp, which is a clock reading).
 */
@inject()
export class DashboardService {
  constructor(private queue: QueueService) {}

  private hourExpression(column: string) {
    return db.connection().dialect.name === 'mysql'
      ? `${column} DIV ${STAMPS_PER_HOUR}`
      : `CAST(${column} / ${STAMPS_PER_HOUR} AS INTEGER)`
  }

  private async rowTables(): Promise<string[]> {
    if (!(await has('table_categories'))) return []
    const rows = await db.from('table_categories').select('id')
    return rows.map((row) => `tt_${Number(row.id)}`)
  }

  async counts() {
    const one = async (query: Promise<any>) => {
      const row = await query
      return Number(row?.total ?? 0)
    }
    const count = (table: string, scope: (query: any) => any = (query) => query) =>
      one(scope(db.from(table)).count('* as total').first())
    const rowTables = await this.rowTables()
    let rows = 0
    for (const table of rowTables) rows += await count(table)
    return {
      users: await count('users'),
      books: (await has('books')) ? await count('books', (query) => query.where('del', false)) : 0,
      messages: (await has('book_messages'))
        ? await count('book_messages', (query) => query.where('del', false))
        : 0,
      tables: rowTables.length,
      rows,
      sesskeys: await count('api_sessions', (query) => query.whereNull('revoked_at')),
      authSessions: (await has('auth_sessions'))
        ? await count('auth_sessions', (query) => query.whereNull('revoked_at'))
        : 0,
    }
  }

  async queueHealth() {
    try {
      return { ok: true, counts: await this.queue.counts() }
    } catch {
      return { ok: false, counts: null }
    }
  }

  /** Per hour over the last day: messages created (cstamp) and table rows last written (sstamp). */
  async charts(now = Date.now()): Promise<{ messages: HourlySeries; rowWrites: HourlySeries }> {
    const lastHour = Math.floor(now / 3_600_000)
    const firstHour = lastHour - HOURS + 1
    const since = firstHour * STAMPS_PER_HOUR
    const series = (totals: Map<number, number>): HourlySeries => {
      const hours: number[] = []
      const counts: number[] = []
      for (let hour = firstHour; hour <= lastHour; hour++) {
        hours.push(hour * 3_600_000)
        counts.push(totals.get(hour) ?? 0)
      }
      return { hours, counts }
    }
    const grouped = async (table: string, column: string, scope = '') => {
      const expression = this.hourExpression(column)
      const result = await db.rawQuery(
        `SELECT ${expression} AS hour, COUNT(*) AS total FROM ${table} WHERE ${column} >= ? ${scope} GROUP BY ${expression}`,
        [since]
      )
      const rows: any[] = db.connection().dialect.name === 'mysql' ? result[0] : result
      return rows.map((row) => [Number(row.hour), Number(row.total)] as const)
    }
    const messages = new Map<number, number>()
    if (await has('book_messages'))
      for (const [hour, total] of await grouped('book_messages', 'cstamp'))
        messages.set(hour, total)
    const rowWrites = new Map<number, number>()
    for (const table of await this.rowTables())
      for (const [hour, total] of await grouped(table, 'sstamp'))
        rowWrites.set(hour, (rowWrites.get(hour) ?? 0) + total)
    return { messages: series(messages), rowWrites: series(rowWrites) }
  }

  /** The latest messages and the newest accounts. */
  async recentActivity() {
    const recentMessages = (await has('book_messages'))
      ? await db
          .from('book_messages as m')
          .join('books as b', 'b.id', 'm.book_id')
          .join('users as u', 'u.id', 'm.creator_id')
          .where('m.del', false)
          .orderBy('m.smid', 'desc')
          .limit(8)
          .select('m.smid', 'm.msg', 'm.cstamp', 'b.code as book', 'u.code as author')
      : []
    const newUsers = await db
      .from('users')
      .orderBy('id', 'desc')
      .limit(5)
      .select('id', 'code', 'email', 'created_at')
    return {
      messages: recentMessages.map((row: any) => ({
        smid: Number(row.smid),
        text: String(row.msg).slice(0, 120),
        at: Math.floor(Number(row.cstamp) / 10),
        book: row.book,
        author: row.author,
      })),
      users: newUsers.map((row: any) => ({
        id: Number(row.id),
        code: row.code,
        email: row.email,
        createdAt: new Date(row.created_at).toISOString(),
      })),
    }
  }
}
