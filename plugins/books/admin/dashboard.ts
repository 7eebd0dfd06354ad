import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type {
  DashboardActivity,
  DashboardChart,
  DashboardFigure,
  DashboardPart,
  DashboardWindow,
} from '#core/plugins/define_plugin'
import { isMysql } from '#core/native_sql'
import { STAMPS_PER_HOUR, stampHourSql } from '#core/db_time'
import { UserService } from '#core/services/user_service'

/** The books plugin's part of the console's dashboard: books, messages, the latest messages. */
@inject()
export default class BooksDashboard implements DashboardPart {
  constructor(private users: UserService) {}

  async figures(): Promise<DashboardFigure[]> {
    const [books, messages] = await Promise.all([
      db.from('books').where('del', false).count('* as total').first(),
      db.from('book_messages').where('del', false).count('* as total').first(),
    ])
    return [
      { key: 'books', label: 'Books', value: Number(books?.total ?? 0), href: '/admin/books' },
      { key: 'messages', label: 'Messages', value: Number(messages?.total ?? 0) },
    ]
  }

  /** Messages created per hour (their creation stamp is a clock reading). */
  async charts(window: DashboardWindow): Promise<DashboardChart[]> {
    const hour = stampHourSql('cstamp', isMysql())
    const rows = await db
      .from('book_messages')
      .where('cstamp', '>=', window.firstHour * STAMPS_PER_HOUR)
      .groupByRaw(hour)
      .select(db.raw(`${hour} AS hour`))
      .count('* as total')
    const perHour = new Map(rows.map((row: any) => [Number(row.hour), Number(row.total)]))
    return [{ key: 'messages', title: 'Messages per hour (last 24 h)', unit: 'messages', perHour }]
  }

  async activity(limit: number): Promise<DashboardActivity[]> {
    const rows = await db
      .from('book_messages as m')
      .join('books as b', 'b.id', 'm.book_id')
      .where('m.del', false)
      .orderBy('m.smid', 'desc')
      .limit(limit)
      .select('m.msg', 'm.cstamp', 'm.creator_id', 'b.id as book_id', 'b.code as book')
    const authors = await this.users.codesOf(rows.map((row) => Number(row.creator_id)))
    return rows.map((row) => ({
      at: Math.floor(Number(row.cstamp) / 10),
      actor: authors.get(Number(row.creator_id)),
      text: `in ${row.book}: ${String(row.msg ?? '').slice(0, 120)}`,
      href: `/admin/books/${Number(row.book_id)}`,
    }))
  }
}
