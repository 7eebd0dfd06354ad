import { inject } from '@adonisjs/core'
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
import { TableDirectory, UNION_CHUNK, chunksOf } from './table_directory.js'

/** How long the dashboard's row figures are reused: counting every table costs a scan of each. */
const CACHE_MS = 30_000

/**
 * The tables plugin's part of the console's dashboard: tables, rows, row
 * writes per hour. Rows live in one table per category, so each figure is one
 * UNION ALL statement over them per 200 tables (never a statement per table), and its result
 * is kept CACHE_MS: a dashboard that reloads on every write does not count a
 * million rows each time.
 */
@inject()
export default class TablesDashboard implements DashboardPart {
  private cached = new Map<string, { at: number; value: Promise<any> }>()

  constructor(private directory: TableDirectory) {}

  private remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const hit = this.cached.get(key)
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value
    const value = compute()
    this.cached.set(key, { at: Date.now(), value })
    // A failure is not kept: the next load asks again.
    value.catch(() => this.cached.delete(key))
    return value
  }

  private async categoryIds(): Promise<number[]> {
    const categories = await db.from('table_categories').select('id')
    return categories.map((row) => Number(row.id))
  }

  async figures(): Promise<DashboardFigure[]> {
    const { tables, rows } = await this.remember('figures', async () => {
      const counts = await this.directory.rowCounts(await this.categoryIds())
      let total = 0
      for (const count of counts.values()) total += count
      return { tables: counts.size, rows: total }
    })
    return [
      { key: 'tables', label: 'Tables', value: tables, href: '/admin/tables' },
      { key: 'rows', label: 'Rows', value: rows },
    ]
  }

  /** Rows last written per hour (a row's stamp is a clock reading of its last write). */
  async charts(window: DashboardWindow): Promise<DashboardChart[]> {
    const perHour = await this.remember(`charts:${window.firstHour}`, async () => {
      const ids = await this.categoryIds()
      const names = ids.map((id) => quoteId(rowTableName(id)))
      const totals = new Map<number, number>()
      const since = window.firstHour * STAMPS_PER_HOUR
      const hour = stampHourSql('sstamp', isMysql())
      for (const chunk of chunksOf(names, UNION_CHUNK)) {
        const union = chunk
          .map((name) => `SELECT ${hour} AS hour FROM ${name} WHERE sstamp >= ?`)
          .join(' UNION ALL ')
        const rows = await readQuery(
          `SELECT hour, COUNT(*) AS total FROM (${union}) writes GROUP BY hour`,
          chunk.map(() => since)
        )
        for (const row of rows)
          totals.set(Number(row.hour), (totals.get(Number(row.hour)) ?? 0) + Number(row.total))
      }
      return totals
    })
    return [
      { key: 'rowWrites', title: 'Row writes per hour (last 24 h)', unit: 'row writes', perHour },
    ]
  }
}
