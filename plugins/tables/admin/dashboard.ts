import db from '@adonisjs/lucid/services/db'
import type {
  DashboardChart,
  DashboardFigure,
  DashboardPart,
  DashboardWindow,
} from '#core/plugins/define_plugin'
import { isMysql, quoteId, readQuery } from '#core/native_sql'
import { STAMPS_PER_HOUR, stampHourSql } from '#core/db_time'
import { rowTableName } from '../lib/field_types.js'

/** How long the dashboard's row figures are reused: counting every table costs a scan of each. */
const CACHE_MS = 30_000

/**
 * The tables plugin's part of the console's dashboard: tables, rows, row
 * writes per hour. Rows live in one table per category, so each figure is one
 * UNION ALL statement over them (never a statement per table), and its result
 * is kept CACHE_MS: a dashboard that reloads on every write does not count a
 * million rows each time.
 */
export default class TablesDashboard implements DashboardPart {
  private cached = new Map<string, { at: number; value: Promise<any> }>()

  private remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const hit = this.cached.get(key)
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value
    const value = compute()
    this.cached.set(key, { at: Date.now(), value })
    // A failure is not kept: the next load asks again.
    value.catch(() => this.cached.delete(key))
    return value
  }

  private async rowTables(): Promise<string[]> {
    const categories = await db.from('table_categories').select('id')
    return categories.map((row) => quoteId(rowTableName(Number(row.id))))
  }

  async figures(): Promise<DashboardFigure[]> {
    const { tables, rows } = await this.remember('figures', async () => {
      const names = await this.rowTables()
      if (names.length === 0) return { tables: 0, rows: 0 }
      const union = names.map((name) => `SELECT COUNT(*) AS total FROM ${name}`).join(' UNION ALL ')
      const [sum] = await readQuery(`SELECT SUM(total) AS total FROM (${union}) counts`)
      return { tables: names.length, rows: Number(sum?.total ?? 0) }
    })
    return [
      { key: 'tables', label: 'Tables', value: tables, href: '/admin/tables' },
      { key: 'rows', label: 'Rows', value: rows },
    ]
  }

  /** Rows last written per hour (a row's stamp is a clock reading of its last write). */
  async charts(window: DashboardWindow): Promise<DashboardChart[]> {
    const perHour = await this.remember(`charts:${window.firstHour}`, async () => {
      const names = await this.rowTables()
      const totals = new Map<number, number>()
      if (names.length === 0) return totals
      const since = window.firstHour * STAMPS_PER_HOUR
      const hour = stampHourSql('sstamp', isMysql())
      const union = names
        .map((name) => `SELECT ${hour} AS hour FROM ${name} WHERE sstamp >= ?`)
        .join(' UNION ALL ')
      const rows = await readQuery(
        `SELECT hour, COUNT(*) AS total FROM (${union}) writes GROUP BY hour`,
        names.map(() => since)
      )
      for (const row of rows) totals.set(Number(row.hour), Number(row.total))
      return totals
    })
    return [
      { key: 'rowWrites', title: 'Row writes per hour (last 24 h)', unit: 'row writes', perHour },
    ]
  }
}
